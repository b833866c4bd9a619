package dr

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
	"github.com/custody-dev/custody/test/testbed"
)

var (
	env *environment.Environment
	hub client.Client
	// metricsToken is a token of the environment's metrics reader.
	metricsToken string
)

func TestDR(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Disaster recovery suite")
}

// The environment: Location "east" of m1 and m3 over storage domain "east", Location "west"
// of m2 over "west", with VolSync in every member. m3 is cordoned, so that the specs' namespaces
// run on m1; it is there for a primary of two members, which fence each other.
var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	addr, err := testbed.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	env, err = environment.Start(ctx, environment.Options{VolSync: true, MetricsAddr: addr, Locations: []environment.LocationOptions{
		{Name: "east", Domain: "east", Members: []string{"m1", "m3"}},
		{Name: "west", Domain: "west", Members: []string{"m2"}},
	}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	hub = env.Hub.Client
	metricsToken, err = env.MetricsToken(ctx)
	Expect(err).NotTo(HaveOccurred())
	Expect(environment.Cordon(ctx, hub, "m3", true)).To(Succeed())
}, NodeTimeout(testbed.StartTimeout))
