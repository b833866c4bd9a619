package environment

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/custody-dev/custody/test/testbed"
)

// TestStartsAndStopsCleanly runs the local environment's default shape with one Location: it
// must bring every target Ready, write the kubeconfigs, expose the controller's metrics to the
// metrics reader, and leave no process behind when it stops.
func TestStartsAndStopsCleanly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o := Default(1, 2)
	o.MetricsAddr = freeAddr(t)
	e, stop := startReady(ctx, t, o)
	for _, c := range append(e.Members, e.Hub) {
		if _, err := os.Stat(c.Kubeconfig); err != nil {
			t.Errorf("kubeconfig of %s: %v", c.Name, err)
		}
	}

	want := []string{
		`custody_targets{state="Ready"} 2`,
		"custody_volume_moves_started_total 0",
		`controller_runtime_reconcile_total{controller="coordination"`,
	}
	token, err := e.MetricsToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	missing := ""
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		// An error or a refusal shows as the metrics missing.
		_, body, _ := testbed.Scrape(ctx, e.MetricsURL(), token)
		missing = ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
			}
		}
		return missing == "", nil
	})
	if err != nil {
		t.Fatalf("metrics lack %q: %v", missing, err)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if left := e.Processes(); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
}

func freeAddr(t *testing.T) string {
	addr, err := testbed.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// startReady starts the environment o and waits until its targets are Ready. The test stops
// it with stop; if it does not, it is stopped when the test ends.
func startReady(ctx context.Context, t *testing.T, o Options) (*Environment, func() error) {
	t.Helper()
	e, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = e.Stop()
		}
	})
	if err := e.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return e, func() error {
		stopped = true
		return e.Stop()
	}
}
