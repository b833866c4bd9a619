package security

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

var (
	env     *environment.Environment
	hub     client.Client
	storage *simstorage.Storage
)

func TestSecurity(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyDuration(5 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Security suite")
}

// The environment: Location "loc" of m1 and m2 over one storage domain, config/default's
// roles and admission policies on the hub, each syncer with its own target's identity.
var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	o := environment.OneLocation()
	o.MetricsAddr, err = testbed.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	env, err = environment.Start(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	hub, storage = env.Hub.Client, env.Storage(domain)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants.
var _ = AfterEach(func() {
	Expect(storage.CheckSingleOwner()).To(Succeed())
	Expect(storage.CheckReleases()).To(Succeed())
})
