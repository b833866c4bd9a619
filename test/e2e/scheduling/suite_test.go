package scheduling

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/custody-dev/custody/controllers"
	"github.com/custody-dev/custody/test/testbed"
)

var (
	bed *testbed.Bed
	hub client.Client
)

func TestScheduling(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultConsistentlyDuration(3 * time.Second)
	RunSpecs(t, "Hub scheduling suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	bed, err = testbed.Start(ctx, testbed.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bed.Stop)
	hub = bed.Hub.Client

	mgr, err := ctrl.NewManager(bed.Hub.Config, ctrl.Options{
		Scheme:                 testbed.Scheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(controllers.Setup(mgr, controllers.Options{})).To(Succeed())
	mgrCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		Expect(mgr.Start(mgrCtx)).To(Succeed())
	}()
	DeferCleanup(func() { cancel(); <-done })
}, NodeTimeout(testbed.StartTimeout))
