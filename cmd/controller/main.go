package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/controllers"
	"github.com/custody-dev/custody/fencing"
)

type options struct {
	metricsAddr, metricsCertDir, probeAddr, leaderNamespace, resources string
	leaderElect, metricsSecure                                         bool
	qps                                                                float64
	burst                                                              int
	heartbeatGrace, fenceDelay                                         time.Duration
	brake                                                              fencing.Brake
}

func main() {
	var o options
	// --kubeconfig (the hub's) is controller-runtime's own flag.
	flag.StringVar(&o.metricsAddr, "metrics-bind-address", ":8443", "Address of the Prometheus metrics endpoint; 0 disables it.")
	flag.BoolVar(&o.metricsSecure, "metrics-secure", true, "Serve the metrics over HTTPS, only to callers the hub authenticates and allows to get /metrics (the ClusterRole custody-metrics-reader). false serves plain HTTP to anyone: for a controller on a developer's machine only.")
	flag.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "Directory of the metrics endpoint's tls.crt and tls.key; empty, or without them: a self-signed certificate made at start.")
	flag.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "Address of the /healthz and /readyz endpoints.")
	flag.BoolVar(&o.leaderElect, "leader-elect", false, "Elect a leader so that only one replica acts at a time.")
	flag.StringVar(&o.leaderNamespace, "leader-election-namespace", "custody-system", "Namespace of the leader election Lease.")
	flag.StringVar(&o.resources, "resources", "", "Comma-separated namespaced types the workload controller labels, as kind.version.group (core: kind.v1); empty means the defaults.")
	flag.Float64Var(&o.qps, "kube-api-qps", 0, "Requests per second to the hub API server; 0 leaves the pace to the API server's priority and fairness.")
	flag.IntVar(&o.burst, "kube-api-burst", 0, "Burst of requests to the hub API server, with --kube-api-qps.")
	flag.DurationVar(&o.heartbeatGrace, "heartbeat-grace", 0, "How long a target may miss heartbeats before it is Unreachable; 0 means three of the periods its syncer announces.")
	flag.DurationVar(&o.fenceDelay, "fence-delay", 0, "How long a volume's owner may be Unreachable before the volume waits for a Fence of it; 0 means three heartbeat graces.")
	flag.Float64Var(&o.brake.Share, "mass-failure-share", fencing.DefaultBrake.Share, "When more than this share of the hub's targets are Unreachable at once, no Fence is asked for and no pair fails over by itself (a split of the hub's network looks the same); 0 turns the brake off. A manual fence and a declared failover still go ahead.")
	flag.IntVar(&o.brake.MinTargets, "mass-failure-min-targets", fencing.DefaultBrake.MinTargets, "The --mass-failure-share brake counts only on a hub of at least this many targets.")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := run(o); err != nil {
		ctrl.Log.WithName("setup").Error(err, "Controller stopped")
		os.Exit(1)
	}
}

func run(o options) error {
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the hub kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(o.qps), o.burst
	if o.qps <= 0 {
		cfg.QPS = -1
	}
	if o.brake.Share < 0 || o.brake.Share > 1 || o.brake.MinTargets < 0 {
		return fmt.Errorf("--mass-failure-share %v and --mass-failure-min-targets %d: a share is between 0 and 1, a count not negative", o.brake.Share, o.brake.MinTargets)
	}
	kinds, err := parseKinds(o.resources)
	if err != nil {
		return err
	}
	return controllers.Run(ctrl.SetupSignalHandler(), cfg, controllers.RunOptions{
		Options:     controllers.Options{Resources: kinds, HeartbeatGrace: o.heartbeatGrace, FenceDelay: o.fenceDelay, Brake: o.brake},
		MetricsAddr: o.metricsAddr, MetricsCertDir: o.metricsCertDir, MetricsSecure: o.metricsSecure,
		ProbeAddr:   o.probeAddr,
		LeaderElect: o.leaderElect, LeaderNamespace: o.leaderNamespace,
	})
}

// parseKinds reads kind.version[.group] entries; nil for an empty flag.
func parseKinds(s string) ([]schema.GroupVersionKind, error) {
	if s == "" {
		return nil, nil
	}
	var out []schema.GroupVersionKind
	for _, e := range strings.Split(s, ",") {
		kind, rest, ok := strings.Cut(strings.TrimSpace(e), ".")
		if !ok || kind == "" {
			return nil, fmt.Errorf("--resources: %q is not kind.version[.group]", e)
		}
		version, group, _ := strings.Cut(rest, ".")
		out = append(out, schema.GroupVersionKind{Group: group, Version: version, Kind: kind})
	}
	return out, nil
}
