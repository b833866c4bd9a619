package security

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
	var err error
	o := environment.OneLocation()
	o.MetricsAddr, err = testbed.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	env = framework.Start(ctx, o)
	hub, storage, hubID = env.Hub.Client, env.Storage(domain), framework.HubID(ctx, env.Hub.Client)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants.
var _ = AfterEach(func() { framework.ExpectLedger(storage) })
