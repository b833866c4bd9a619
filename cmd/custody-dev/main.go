// Command custody-dev runs Custody locally: a hub and member clusters on real control planes
// with simulated storage, the SyncTargets and Locations that describe them, the hub
// controllers and one syncer per member. It writes a kubeconfig per cluster to its state
// directory and runs until interrupted. `make run` builds and starts it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/environment"
)

func main() {
	var (
		dir                string
		locations, members int
		wipe               bool
		heartbeat          time.Duration
		metricsAddr        string
	)
	flag.StringVar(&dir, "dir", ".custody", "Directory for the clusters' state and kubeconfigs; kept between runs.")
	flag.IntVar(&locations, "locations", 2, "Number of Locations, each over a storage domain of its own.")
	flag.IntVar(&members, "members", 2, "Number of member clusters in each Location.")
	flag.BoolVar(&wipe, "wipe", false, "Start from nothing: remove the state of earlier runs first.")
	flag.DurationVar(&heartbeat, "heartbeat-period", 2*time.Second, "How often each syncer renews its heartbeat.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:8080", "Where the controller serves its Prometheus metrics; 0 disables them.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()

	if err := run(dir, locations, members, wipe, heartbeat, metricsAddr, zapOpts); err != nil {
		fmt.Fprintln(os.Stderr, "custody-dev:", err)
		os.Exit(1)
	}
}

func run(dir string, locations, members int, wipe bool, heartbeat time.Duration, metricsAddr string, zapOpts zap.Options) error {
	if locations < 1 || members < 1 {
		return fmt.Errorf("--locations and --members must be at least 1, got %d and %d", locations, members)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if wipe {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	// The logs go to a file, so that the terminal shows what matters to a person.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logFile, err := os.OpenFile(filepath.Join(dir, "custody.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts), zap.WriteTo(logFile)))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	start := time.Now()
	o := environment.Default(locations, members)
	o.Dir, o.HeartbeatPeriod, o.MetricsAddr = dir, heartbeat, metricsAddr
	env, err := environment.Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() {
		fmt.Println("Stopping Custody")
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "custody-dev: stopping:", err)
		}
	}()
	if err := env.WaitReady(ctx); err != nil {
		return err
	}
	printUsage(env, dir, time.Since(start))
	<-ctx.Done()
	return nil
}

func printUsage(env *environment.Environment, dir string, took time.Duration) {
	rel := func(p string) string {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, p); err == nil {
				return r
			}
		}
		return p
	}
	fmt.Printf("\nCustody is running: every target Ready after %s.\n\n", took.Round(100*time.Millisecond))
	fmt.Printf("  hub:  export KUBECONFIG=%s\n", rel(env.Hub.Kubeconfig))
	for _, m := range env.Members {
		fmt.Printf("  %s: %s\n", m.Name, rel(m.Kubeconfig))
	}
	fmt.Printf(`
Try:
  kubectl get synctargets,locations
  PATH=$PWD/bin:$PATH kubectl custody targets
  PATH=$PWD/bin:$PATH kubectl custody volumes -A

Logs go to %s. State is kept in %s for the next start (--wipe starts
afresh). Ctrl-C stops everything.
`, rel(filepath.Join(dir, "custody.log")), rel(dir))
}
