package statefulset

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
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, err = environment.Start(ctx, environment.OneLocation())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	hub, storage = env.Hub.Client, env.Storage(domain)
	ns := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: "kube-system"}, ns)).To(Succeed())
	hubID = string(ns.UID)
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants: never two owners, never a release of storage
// in use or released already.
var _ = AfterEach(func() {
	Expect(storage.CheckSingleOwner()).To(Succeed())
	Expect(storage.CheckReleases()).To(Succeed())
	Expect(storage.CheckWrites()).To(Succeed())
})
