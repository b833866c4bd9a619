package storageclass

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

// hub is a client of the suite's hub, where the hub controllers run.
var hub client.Client

func TestStorageClass(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	// A spec's context has no deadline: without this, an Eventually given the context would
	// wait for as long as the test binary lives.
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultConsistentlyDuration(2 * time.Second)
	RunSpecs(t, "Storage class suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	bed, err := testbed.Start(ctx, testbed.Options{})
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
	mgrCtx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(stopped)
		Expect(mgr.Start(mgrCtx)).To(Succeed())
	}()
	DeferCleanup(func() { stop(); <-stopped })
}, NodeTimeout(testbed.StartTimeout))
