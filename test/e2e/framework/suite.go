package framework

import (
	"cmp"
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
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

// ReportPendingClaims writes to the GinkgoWriter, when the current spec failed, every claim
// of the members that is not Bound, with its annotations and the events about it: what a
// claim that never bound (a destination's, a restore's) waited for, from the binder and the
// storage, which the controllers' logs do not show.
func ReportPendingClaims(ctx context.Context, env *environment.Environment) {
	if !CurrentSpecReport().Failed() {
		return
	}
	for _, m := range env.Members {
		claims, events := &corev1.PersistentVolumeClaimList{}, &corev1.EventList{}
		if err := m.Client.List(ctx, claims); err != nil {
			GinkgoWriter.Printf("claims of %s: %v\n", m.Name, err)
			continue
		}
		if err := m.Client.List(ctx, events); err != nil {
			GinkgoWriter.Printf("events of %s: %v\n", m.Name, err)
		}
		about := map[types.UID][]corev1.Event{}
		for _, e := range events.Items {
			about[e.InvolvedObject.UID] = append(about[e.InvolvedObject.UID], e)
		}
		for _, c := range claims.Items {
			if c.Status.Phase == corev1.ClaimBound {
				continue
			}
			GinkgoWriter.Printf("%s: claim %s/%s %s, class %s, created %s, deleted %v, annotations %v\n", m.Name, c.Namespace, c.Name,
				c.Status.Phase, ptr.Deref(c.Spec.StorageClassName, ""), c.CreationTimestamp, c.DeletionTimestamp, c.Annotations)
			for _, e := range about[c.UID] {
				GinkgoWriter.Printf("  %s %s %s (%d times, last %s): %s\n", e.Type, e.Reason, cmp.Or(e.Source.Component, e.ReportingController), e.Count, e.LastTimestamp, e.Message)
			}
		}
	}
}
