package statefulset

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

func TestStatefulSets(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyDuration(4 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "StatefulSet suite")
}

// The environment: Location "loc" of m1 and m2 over storage domain "shared", whose class is
// each member's default.
var _ = BeforeSuite(func(ctx context.Context) {
	env = framework.Start(ctx, environment.OneLocation())
	hub, storage, hubID = env.Hub.Client, env.Storage(domain), framework.HubID(ctx, env.Hub.Client)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants, and no acknowledged write lost.
var _ = AfterEach(func() {
	framework.ExpectLedger(storage)
	Expect(storage.CheckWrites()).To(Succeed())
})
