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
)

func TestDR(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Disaster recovery suite")
}

// The environment: Location "east" of m1 over storage domain "east", Location "west" of m2
// over "west", with VolSync in both members.
var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = environment.Start(ctx, environment.Options{VolSync: true, Locations: []environment.LocationOptions{
		{Name: "east", Domain: "east", Members: []string{"m1"}},
		{Name: "west", Domain: "west", Members: []string{"m2"}},
	}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	hub = env.Hub.Client
}, NodeTimeout(testbed.StartTimeout))
