package controllers

import (
	"context"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"

	"github.com/custody-dev/custody/api"
	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/controllers/securemetrics"
)

// RunOptions configure Run: the hub controllers, and how their manager serves and elects.
type RunOptions struct {
	Options
	// MetricsAddr is where the metrics are served; "0" turns them off. MetricsCertDir holds
	// their tls.crt and tls.key (empty, or without them: a self-signed certificate).
	MetricsAddr, MetricsCertDir string
	// MetricsSecure serves the metrics over HTTPS, only to the identities the hub allows to
	// get /metrics; false serves plain HTTP to anyone.
	MetricsSecure bool
	// ProbeAddr is where /healthz and /readyz are served; "0" turns them off.
	ProbeAddr string
	// LeaderElect elects a leader with a Lease in LeaderNamespace, so that only one replica
	// acts at a time.
	LeaderElect     bool
	LeaderNamespace string
	// Restartable lets Run be called again in the same process once it returned, as a test
	// bed that stops and starts the controller does: controller names are then not unique.
	Restartable bool
}

// Run runs the hub controllers against the hub API server of cfg until ctx ends. The
// controllers catch up within about a second of the hub answering again after an outage:
// a starting server's asked wait is shortened, and informers and work queues that wait out
// a failure are retried as soon as it answers (package reconnect).
func Run(ctx context.Context, cfg *rest.Config, o RunOptions) error {
	recovery := reconnect.New()
	o.Recovery = recovery
	mgr, err := ctrl.NewManager(reconnect.Config(cfg), ctrl.Options{
		Scheme:                  api.NewScheme(),
		Cache:                   CacheOptions(cache.Options{NewInformer: recovery.NewInformer}),
		Metrics:                 securemetrics.Options(o.MetricsAddr, o.MetricsCertDir, o.MetricsSecure),
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "custody-controller",
		LeaderElectionNamespace: o.LeaderNamespace,
		// A replica that stops hands the lead over at once, not after the Lease expires: Run
		// returns only once every controller stopped, and the process then ends.
		LeaderElectionReleaseOnCancel: true,
		Logger:                        ctrl.Log.WithName("controller"),
		Controller:                    config.Controller{SkipNameValidation: ptr.To(o.Restartable)},
	})
	if err != nil {
		return err
	}
	if err := Setup(mgr, o.Options); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.Start(ctx)
}
