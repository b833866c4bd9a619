package dr

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
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
// run on m1; it is there for a primary of two members, which fence each other. The hub spans
// three sites: east's members run in site-1, west's in site-2, each beside an API server and a
// replica of the controller, and the witness holds the third etcd member.
var _ = BeforeSuite(func(ctx context.Context) {
	addr, err := testbed.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	env = framework.Start(ctx, environment.Options{VolSync: true, MetricsAddr: addr, HubSites: 3, Locations: []environment.LocationOptions{
		{Name: "east", Domain: "east", Members: []string{"m1", "m3"}, Site: "site-1"},
		{Name: "west", Domain: "west", Members: []string{"m2"}, Site: "site-2"},
	}})
	hub = env.Hub.Client
	metricsToken, err = env.MetricsToken(ctx)
	Expect(err).NotTo(HaveOccurred())
	framework.Cordon(ctx, hub, "m3", true)
}, NodeTimeout(testbed.StartTimeout))

var _ = AfterEach(func(ctx SpecContext) { framework.ReportPendingClaims(ctx, env) })
