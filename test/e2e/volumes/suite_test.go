package volumes

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
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
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = environment.Start(ctx, environment.Options{Locations: []environment.LocationOptions{
		{Name: "loc", Domain: domain, Members: []string{"m1", "m2"}},
		{Name: "other", Domain: domain, Members: []string{"m3"}},
	}})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	hub, storage = env.Hub.Client, env.Storage(domain)
	ns := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns)).To(Succeed())
	hubID = string(ns.UID)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants.
var _ = AfterEach(func() {
	Expect(storage.CheckSingleOwner()).To(Succeed())
	Expect(storage.CheckReleases()).To(Succeed())
})
