package volumes

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

var (
	env     *environment.Environment
	hub     client.Client
	storage *simstorage.Storage
	hubID   string
)

func TestVolumes(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyDuration(4 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Volume coordination suite")
}

// The environment: Location "loc" of m1 and m2, Location "other" of m3, all three over
// storage domain "shared".
var _ = BeforeSuite(func(ctx context.Context) {
	env = framework.Start(ctx, environment.Options{Locations: []environment.LocationOptions{
		{Name: "loc", Domain: domain, Members: []string{"m1", "m2"}},
		{Name: "other", Domain: domain, Members: []string{"m3"}},
	}})
	hub, storage, hubID = env.Hub.Client, env.Storage(domain), framework.HubID(ctx, env.Hub.Client)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants.
var _ = AfterEach(func() { framework.ExpectLedger(storage) })
