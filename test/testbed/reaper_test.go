package testbed

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

const reaperChildEnv = "CUSTODY_TESTBED_REAPER_CHILD"

// TestReaperCleansUpAfterKill starts a bed in a child process, kills the child with SIGKILL,
// so that no Stop runs, and checks that the bed's processes and directory go anyway.
func TestReaperCleansUpAfterKill(t *testing.T) {
	if os.Getenv(reaperChildEnv) != "" {
		runReaperChild(t)
		return
	}
	child := exec.Command(os.Args[0], "-test.run=^TestReaperCleansUpAfterKill$", "-test.v")
	child.Env = append(os.Environ(), reaperChildEnv+"=1")
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })

	var dir string
	lines := bufio.NewScanner(out)
	for dir == "" && lines.Scan() {
		if d, ok := strings.CutPrefix(lines.Text(), "BED_DIR="); ok {
			dir = d
		}
	}
	if dir == "" {
		t.Fatal("the child never reported a started bed")
	}
	// The controller manager runs once it has read its kubeconfig; on a loaded machine that
	// may be a moment after the bed reported.
	names := map[string]bool{}
	err = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		names = map[string]bool{}
		for _, p := range processesNaming(dir) {
			names[p.Name] = true
		}
		return names["etcd"] && names["kube-apiserver"] && names["kube-controller"], nil
	})
	if err != nil {
		t.Fatalf("before the kill, etcd, kube-apiserver and kube-controller did not all name %s; found %v", dir, names)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	var left []Process
	var statErr error
	err = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		left = processesNaming(dir)
		_, statErr = os.Stat(dir)
		return len(left) == 0 && os.IsNotExist(statErr), nil
	})
	if err != nil {
		t.Fatalf("30s after the kill: processes %v left, directory stat: %v", left, statErr)
	}
}

// runReaperChild starts a hub-only bed, reports its directory and waits to be killed.
func runReaperChild(t *testing.T) {
	bed, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("BED_DIR=" + bed.Dir + "\n")
	time.Sleep(10 * time.Minute)
}
