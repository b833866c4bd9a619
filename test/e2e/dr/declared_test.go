package dr

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

var _ = Describe("A declared failover", func() {
	It("fences the primary's members that still answer before it restores, so that they write no more, and goes through controller restarts at each step", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		old := pv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		replicated := write(ctx, east, "m1", old, "before", 3)
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1d"}, vo)
		replica := *vo.Status.Replica
		late := write(ctx, east, "m1", old, "after", 2)

		By("declaring the failover with kubectl custody while both members of the primary answer")
		Expect(custody(ctx, "failover", ns, "--yes", "--wait=false")).To(ContainSubstring("locationpair/%s: failover to west asked", ns))
		var refused error
		steps := followRestarting(ctx, pair, func(step string) {
			if step != schedulingv1alpha1.ProgressionRestoring {
				return
			}
			// The primary is fenced before anything is restored: its members write no more.
			Expect(east.Fenced("m1")).To(BeTrue(), "m1 is not fenced off east while the failover restores")
			Expect(east.Fenced("m3")).To(BeTrue(), "m3 is not fenced off east while the failover restores")
			refused = east.Write("m1", old, "m1 fenced")
		})
		Expect(steps).To(ContainElements(schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionCompleted))
		Expect(refused).To(HaveOccurred(), "the storage accepted a write of m1 after its fence")
		a := pair.Status.LastAction
		Expect(a.Mode).To(Equal(schedulingv1alpha1.Failover))
		Expect(a.Automatic).To(BeFalse())
		Expect(a.OldestReplicaTime.Time).To(BeTemporally("==", replica.Time.Time))

		By("restoring the volume on the secondary from its replica")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		Expect(vo.Status.Owner).To(Equal("m2"))
		Expect(vo.Status.RestoredFrom.Snapshot).To(Equal(replica.Snapshot))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(west.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(replicated))

		By("cleaning the primary, which never stopped: it removes its copies, is unfenced, and the pair protects from the secondary")
		m1 := env.Member("m1").Client
		Eventually(func(g Gomega) {
			err := m1.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m1", ns), Name: "data"}, &corev1.PersistentVolumeClaim{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "m1 keeps its copy of the claim: %v", err)
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting), "%v; the old primary: %v", pair.Status.Conditions, targetConditions(ctx, "m1", "m3"))
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
		Expect(east.Fenced("m1")).To(BeFalse())
		noFencesOf(ctx, "m1", "m3")
		Expect(east.Records(old)).To(Equal(append(replicated, late...)), "the set-aside volume holds every write accepted before the fence, and none after")
		Expect(east.Violations()).To(BeEmpty())
		Expect(east.LostWrites(old)).To(BeEmpty())
		Expect(west.LostWrites(pv.Spec.CSI.VolumeHandle)).To(BeEmpty())
		Expect(vo.Status.SetAside.VolumeHandle).To(Equal(old))
	})
})

var _ = Describe("A Fence a LocationPair holds", func() {
	It("names a LocationPair, and is lifted once that pair is gone and its target is back and clean", func(ctx SpecContext) {
		f := &storagev1alpha1.Fence{
			ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName("m3", "east")},
			Spec: storagev1alpha1.FenceSpec{TargetName: "m3", Domain: "east", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network,
				HeldBy: "placement/" + rand.String(5)},
		}
		Expect(hub.Create(ctx, f)).To(MatchError(ContainSubstring("heldBy names a LocationPair, as locationpair/NAME")))

		By("holding a Fence of m3, which answers and is clean, for a pair that does not exist")
		// A pair of an earlier spec may still hold the Fence of m3 until m3 reported clean.
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(f), &storagev1alpha1.Fence{}))
		}).WithContext(ctx).Should(BeTrue(), "an earlier Fence of m3 stays")
		f.Spec.HeldBy = storagev1alpha1.PairHolder("gone-" + rand.String(5))
		Expect(hub.Create(ctx, f)).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKeyFromObject(f), f))
		}).WithContext(ctx).Should(BeTrue(), "the Fence held by a pair that is gone stays")
		Expect(env.Storage("east").Fenced("m3")).To(BeFalse())
	})
})
