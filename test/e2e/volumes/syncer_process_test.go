package volumes

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/custody-dev/custody/config"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// syncerProcess is a member's syncer run as a process of its own, built from cmd/syncer as
// deployed and with the environment its Deployment gives it (its Go runtime's memory limit
// above all), in place of the syncer the environment runs in the benchmark's process. What
// it holds is its alone: in the benchmark's process its heap is mixed with the bed's, the
// controller's, the other syncer's and the simulated storage's, and what a stopped syncer
// leaves behind to collect does not tell what it held.
type syncerProcess struct {
	cmd *exec.Cmd
	// metrics and pprof are the base URLs of its endpoints, on the loopback.
	metrics, pprof string
	done           chan struct{}
}

// buildSyncer builds cmd/syncer into the bed's directory and returns the binary's path.
func buildSyncer(b *testing.B, r *run) string {
	root, err := testbed.RepoRoot()
	if err != nil {
		b.Fatal(err)
	}
	binary := filepath.Join(r.Dir, "custody-syncer")
	build := exec.Command("go", "build", "-o", binary, "./cmd/syncer")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building the syncer: %v\n%s", err, out)
	}
	return binary
}

// startSyncerProcess runs the syncer of a member, whose syncer the environment no longer
// runs, as a process of binary, with the member's hub identity and its newest token.
func startSyncerProcess(b *testing.B, r *run, binary, member string) *syncerProcess {
	hubKubeconfig, err := r.SyncerCredential(member).Kubeconfig()
	if err != nil {
		b.Fatal(err)
	}
	// The paths name the bed's directory: the bed's reaper ends the process if the benchmark
	// dies without stopping it.
	hubPath := filepath.Join(r.Dir, member+"-syncer-hub.kubeconfig")
	if err := os.WriteFile(hubPath, hubKubeconfig, 0o600); err != nil {
		b.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(r.Dir, member+"-syncer.log"))
	if err != nil {
		b.Fatal(err)
	}
	metricsAddr, pprofAddr := freeAddr(b), freeAddr(b)
	secret := environment.SyncerHubKubeconfigSecret
	p := &syncerProcess{
		cmd: exec.Command(binary, "--hub-kubeconfig", hubPath, "--member-kubeconfig", r.Member(member).Kubeconfig,
			"--hub-kubeconfig-secret", secret.Namespace+"/"+secret.Name, "--sync-target-name", member,
			"--heartbeat-period", r.HeartbeatPeriod().String(), "--health-probe-bind-address", "0",
			"--metrics-bind-address", metricsAddr, "--metrics-secure=false", "--pprof-bind-address", pprofAddr),
		metrics: "http://" + metricsAddr, pprof: "http://" + pprofAddr, done: make(chan struct{}),
	}
	p.cmd.Env = append(os.Environ(), deployedEnv(b)...)
	p.cmd.Stdout, p.cmd.Stderr = logs, logs
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		logs.Close()
		close(p.done)
	}()
	b.Cleanup(p.stop)
	poll(b, "the syncer process serving its metrics", time.Minute, cachePoll, func() bool {
		_, err := get(p.metrics + "/metrics")
		return err == nil
	})
	return p
}

// deployedEnv is the environment the syncer's Deployment gives its container as values
// (config/syncer/syncer.yaml), such as the Go runtime's memory limit, as NAME=value.
func deployedEnv(b *testing.B) []string {
	manifest, err := config.RenderMember(config.Member{SyncTarget: "m1"})
	if err != nil {
		b.Fatal(err)
	}
	for doc := range strings.SplitSeq(string(manifest), "\n---\n") {
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal([]byte(doc), d); err != nil {
			b.Fatal(err)
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			if d.Kind != "Deployment" || c.Name != "syncer" {
				continue
			}
			var env []string
			for _, e := range c.Env {
				if e.ValueFrom == nil {
					env = append(env, e.Name+"="+e.Value)
				}
			}
			return env
		}
	}
	b.Fatal("the member's manifest has no syncer Deployment")
	return nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// stop ends the process as the kubelet does, and kills it if it has not ended within 30 s.
func (p *syncerProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// gathered sums the process's metric family over the series whose label is value; with no
// label, over all of them. A process not started yet counts nothing.
func (p *syncerProcess) gathered(b *testing.B, family, label, value string) float64 {
	if p == nil {
		return 0
	}
	text, err := get(p.metrics + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	return sumFamily(text, family, label, value)
}

// memory is the process's resident set and Go heap in use, in MB, after a garbage collection
// (which a heap profile asked with gc=1 runs first). The heap profile, of what the process
// allocated and still holds, is written to profile for go tool pprof.
func (p *syncerProcess) memory(b *testing.B, profile string) held {
	heap, err := get(p.pprof + "/debug/pprof/heap?gc=1")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(profile, []byte(heap), 0o644); err != nil {
		b.Fatal(err)
	}
	return held{
		rss:  p.gathered(b, "process_resident_memory_bytes", "", "") / (1 << 20),
		heap: p.gathered(b, "go_memstats_heap_inuse_bytes", "", "") / (1 << 20),
	}
}

// process is the process's memory as the bed reads it: the process is one of the bed's, as
// its command line names the bed's directory.
func (p *syncerProcess) process(b *testing.B, r *run) testbed.Process {
	for _, proc := range r.Processes() {
		if proc.PID == p.cmd.Process.Pid {
			return proc
		}
	}
	b.Fatal("the syncer process is not among the bed's")
	return testbed.Process{}
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return string(body), err
}

// sumFamily sums, in metrics in Prometheus' text format, the family's series whose label is
// value; with no label, all of them.
func sumFamily(metrics, family, label, value string) float64 {
	want := label + `="` + value + `"`
	sum := 0.0
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		series, v, ok := strings.Cut(sc.Text(), " ")
		name, labels, _ := strings.Cut(series, "{")
		if !ok || name != family || (label != "" && !strings.Contains(labels, want)) {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			sum += f
		}
	}
	return sum
}
