package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

// LogToGinkgo sends the logs of the controllers and syncers run in the test process to the
// GinkgoWriter, which shows them with a failed spec, or always with -ginkgo.v.
func LogToGinkgo() {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
}

// StartBed starts a bed for the suite, and stops it when the suite ends.
func StartBed(ctx context.Context, o testbed.Options) *testbed.Bed {
	GinkgoHelper()
	bed, err := testbed.Start(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bed.Stop)
	return bed
}

// Start starts an environment for the suite, logging to the GinkgoWriter, and waits until
// every SyncTarget of it is Ready; it stops the environment when the suite ends.
func Start(ctx context.Context, o environment.Options) *environment.Environment {
	GinkgoHelper()
	LogToGinkgo()
	env, err := environment.Start(ctx, o)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(env.Stop)
	Expect(env.WaitReady(ctx)).To(Succeed())
	return env
}

// HubID is the hub's identity as the syncers read it: the UID of its kube-system namespace,
// which names the copies of hub objects in the members (CopyKey).
func HubID(ctx context.Context, hub client.Client) string {
	GinkgoHelper()
	ns := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns)).To(Succeed())
	return string(ns.UID)
}

// ExpectLedger checks the storage ledger's invariants, as suites do after every spec: a
// volume never had two owners at once, and storage was never released while in use or
// released twice.
func ExpectLedger(storage *simstorage.Storage) {
	GinkgoHelper()
	Expect(storage.CheckSingleOwner()).To(Succeed())
	Expect(storage.CheckReleases()).To(Succeed())
}
