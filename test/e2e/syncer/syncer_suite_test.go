package syncer

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/custody-dev/custody/controllers/health"
	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

// The suite's heartbeat: short, so that the health specs run in seconds.
const (
	heartbeatPeriod = time.Second
	grace           = 4 * time.Second
)

var (
	bed *testbed.Bed
	// hubID is the hub's identity, as the syncers read it.
	hubID string
	// syncers are the running syncers of the members, by target name.
	syncers = map[string]*runningSyncer{}
)

func TestSyncer(t *testing.T) {
	RegisterFailHandler(Fail)
	// Bounds for the waits: a two-core machine runs three control planes and the syncers.
	SetDefaultEventuallyTimeout(45 * time.Second)
	SetDefaultEventuallyPollingInterval(100 * time.Millisecond)
	SetDefaultConsistentlyDuration(3 * time.Second)
	SetDefaultConsistentlyPollingInterval(200 * time.Millisecond)
	// The specs pass their context to every wait; the bounds above must hold all the same.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Syncer suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	framework.LogToGinkgo()
	opts := testbed.TwoMembers()
	opts.VolSync = true
	bed = framework.StartBed(ctx, opts)
	hubID = framework.HubID(ctx, bed.Hub.Client)

	installRBAC(ctx)
	startHealthController()
	for _, m := range bed.Members {
		createSyncTarget(ctx, m.Name)
		syncers[m.Name] = startSyncer(m.Name, m)
	}
}, NodeTimeout(testbed.StartTimeout+time.Minute))

// startHealthController runs the hub's health controller, with the controller's role only
// and as cmd/controller catches up after an outage of the hub, until the suite ends.
func startHealthController() {
	cfg, err := bed.Hub.UserConfig("custody-controller", controllersGroup)
	Expect(err).NotTo(HaveOccurred())
	recovery := reconnect.New()
	mgr, err := ctrl.NewManager(reconnect.Config(cfg), ctrl.Options{
		Scheme:                 testbed.Scheme(),
		Cache:                  cache.Options{NewInformer: recovery.NewInformer},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	Expect(err).NotTo(HaveOccurred())
	opts := controller.Options{NewQueue: recovery.NewQueue}
	Expect((&health.Reconciler{Client: mgr.GetClient(), Grace: grace}).SetupWithManager(mgr, opts)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- mgr.Start(ctx) }()
	DeferCleanup(func() {
		cancel()
		Expect(<-done).To(Succeed())
	})
}
