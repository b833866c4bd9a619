package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/environment"
)

func main() {
	if len(os.Args) > 1 {
		if c := findCommand(os.Args[1]); c != nil {
			os.Exit(commandMain(c, os.Args[2:]))
		}
	}
	var (
		dir                string
		locations, members int
		hubSites           int
		wipe               bool
		heartbeat          time.Duration
		metricsAddr        string
	)
	flag.StringVar(&dir, "dir", defaultDir, "Directory for the clusters' state and kubeconfigs; kept between runs.")
	flag.IntVar(&locations, "locations", 2, "Number of Locations, each over a storage domain of its own.")
	flag.IntVar(&members, "members", 2, "Number of member clusters in each Location.")
	flag.IntVar(&hubSites, "hub-sites", 1, "Sites the hub spans: 1, or 3 (or another odd number) for an etcd member in each, an API server and a controller replica in each but the last, the witness, and the Locations in the main sites in turn; stop-site loses one.")
	flag.BoolVar(&wipe, "wipe", false, "Start from nothing: remove the state of earlier runs first.")
	flag.DurationVar(&heartbeat, "heartbeat-period", 2*time.Second, "How often each syncer renews its heartbeat. A target is Unreachable after three periods without one, and an owner Unreachable for three times that is fenced off its volumes.")
	flag.StringVar(&metricsAddr, "metrics-bind-address", "127.0.0.1:8443", "Where the controller serves its Prometheus metrics, over HTTPS to the hub's ServiceAccount custody-system/custody-metrics-reader, as deployed; 0 disables them.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Usage = usage
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "custody-dev: unexpected arguments %q: a command comes first, as in custody-dev stop MEMBER --dir DIR\n", flag.Args())
		os.Exit(2)
	}

	if err := run(dir, locations, members, hubSites, wipe, heartbeat, metricsAddr, zapOpts); err != nil {
		fmt.Fprintln(os.Stderr, "custody-dev:", err)
		os.Exit(1)
	}
}

// usage prints how to run custody-dev and its commands, and its flags.
func usage() {
	w := flag.CommandLine.Output()
	fmt.Fprint(w, "Usage:\n  custody-dev [flags]\n      Run Custody locally until interrupted.\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %s\n      %s.\n", c.usage(), c.summary)
	}
	fmt.Fprintln(w, "\nFlags:")
	flag.PrintDefaults()
}

// commandMain runs a command and returns the process's exit code: 2 for a command line that
// does not parse, 1 for a command that fails.
func commandMain(c *command, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := runCommand(ctx, c, args, os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	fmt.Fprintln(os.Stderr, "custody-dev:", err)
	return 1
}

func run(dir string, locations, members, hubSites int, wipe bool, heartbeat time.Duration, metricsAddr string, zapOpts zap.Options) error {
	if locations < 1 || members < 1 {
		return fmt.Errorf("--locations and --members must be at least 1, got %d and %d", locations, members)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	// Another run on the same state is refused before anything touches it.
	if err := claimSocket(filepath.Join(dir, socketName)); err != nil {
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
	o := environment.AcrossSites(environment.Default(locations, members), hubSites)
	o.Dir, o.HeartbeatPeriod, o.MetricsAddr = dir, heartbeat, metricsAddr
	// The members run VolSync and a snapshotter, as simulated, for LocationPairs.
	o.VolSync = true
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
	if shutdown, err := serveControl(ctx, env, filepath.Join(dir, socketName), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "custody-dev: no control socket, so stop, start and status cannot reach this run:", err)
	} else {
		defer shutdown()
	}
	printUsage(env, dir, time.Since(start))
	<-ctx.Done()
	return nil
}

func printUsage(env *environment.Environment, dir string, took time.Duration) {
	// Paths under the working directory are shown relative to it, others in full.
	rel := func(p string) string {
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, p); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return r
			}
		}
		return p
	}
	fmt.Printf("\nCustody is running: every target Ready after %s.\n\n", took.Round(100*time.Millisecond))
	fmt.Printf("  hub:  export KUBECONFIG=%s\n", rel(env.Hub.Kubeconfig))
	if sites := env.Hub.Sites(); len(sites) > 0 {
		fmt.Printf("        across sites %s; API servers %s\n", strings.Join(sites, ", "), strings.Join(env.Hub.Servers(), ", "))
	}
	for _, m := range env.Members {
		fmt.Printf("  %s: %s\n", m.Name, rel(m.Kubeconfig))
	}
	dirFlag := ""
	if d := rel(dir); d != defaultDir {
		dirFlag = " --dir " + d
	}
	fmt.Printf(`
Try:
  kubectl get synctargets,locations
  PATH=$PWD/bin:$PATH kubectl custody targets
  PATH=$PWD/bin:$PATH kubectl custody volumes -A
  kubectl --kubeconfig %[7]s get nodes,pods -A   # a member's nodes and what runs on them
  %[1]s status%[2]s
  %[1]s stop %[3]s%[2]s     # lose a member (--partition: only its syncer)
  %[1]s start %[3]s%[2]s    # and bring it back
%[6]s
Logs go to %[4]s. State is kept in %[5]s for the next start (--wipe starts
afresh). Ctrl-C stops everything.
`, rel(os.Args[0]), dirFlag, env.Members[0].Name, rel(filepath.Join(dir, "custody.log")), rel(dir), scrapeHint(env),
		rel(env.Members[0].Kubeconfig))
}

// scrapeHint says how to read the controller's metrics as the environment's metrics reader,
// or nothing when they are not served.
func scrapeHint(env *environment.Environment) string {
	if env.MetricsURL() == "" {
		return ""
	}
	return fmt.Sprintf("  curl -k -H \"Authorization: Bearer $(kubectl -n custody-system create token %s)\" %s\n",
		environment.MetricsReader, env.MetricsURL())
}
