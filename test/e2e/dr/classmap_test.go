package dr

import (
	"context"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A LocationPair's storage class map", func() {
	It("replicates a volume whose class the other Location names otherwise into the class mapped, fails over in it, and relocates back into the claim's own", func(ctx SpecContext) {
		ns := app(ctx, "east")
		// Class east is the primary members' own: at the secondary the same storage is
		// class west.
		vo, pv := bound(ctx, environment.Claim(ns, "pinned", "east", corev1.ReadWriteOnce), "m1")
		east, west := env.Storage("east"), env.Storage("west")
		written := write(ctx, east, "m1", pv.Spec.CSI.VolumeHandle, "before", 3)
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1d",
			StorageClassMap: []schedulingv1alpha1.StorageClassMapping{{Primary: "east", Secondary: "west"}}}, vo)

		By("receiving the replicas on the secondary in the class mapped")
		vr := &storagev1alpha1.VolumeReplication{}
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
		Expect(vr.Spec.StorageClassName).To(Equal(ptr.To("west")))
		rd := &volsyncv1alpha1.ReplicationDestination{}
		Expect(env.Member("m2").Client.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m2", ns), Name: "custody-pinned"}, rd)).To(Succeed())
		Expect(rd.Spec.RsyncTLS.StorageClassName).To(Equal(ptr.To("west")))

		By("failing over: the claim is restored on the secondary in the class mapped")
		custody(ctx, "failover", ns, "--yes", "--wait=false")
		completed(ctx, pair)
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Owner).To(Equal("m2"))
		Expect(vo.Status.StorageClassName).To(Equal("west"))
		claim := &corev1.PersistentVolumeClaim{}
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), claim)).To(Succeed())
		Expect(claim.Annotations).To(HaveKeyWithValue(storagev1alpha1.StorageClassAnnotation, "west"))
		Expect(copyClass(ctx, "m2", ns, "pinned")).To(Equal("west"))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(west.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(written))

		By("protecting from the secondary into the claim's own class at the primary")
		written = append(written, write(ctx, west, "m2", pv.Spec.CSI.VolumeHandle, "after", 2)...)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(vr.Spec.Source).To(Equal("m2"))
			g.Expect(vr.Spec.StorageClassName).To(Equal(ptr.To("east")))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting), "%v", pair.Status.Conditions)
		}).WithContext(ctx).Should(Succeed())

		By("relocating back: the claim is restored on the primary in the class it names")
		custody(ctx, "relocate", ns, "--yes", "--wait=false")
		completed(ctx, pair)
		// The namespace may still move between the primary's members right after the
		// relocate, and the claim with it: its copy is read where the claim is Bound.
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(vo.Status.StorageClassName).To(Equal("east"))
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(env.Member(vo.Status.Owner).Client.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, vo.Status.Owner, ns), Name: "pinned"}, c)).To(Succeed())
			g.Expect(ptr.Deref(c.Spec.StorageClassName, "")).To(Equal("east"))
		}).WithContext(ctx).Should(Succeed())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), claim)).To(Succeed())
		Expect(claim.Annotations).NotTo(HaveKey(storagev1alpha1.StorageClassAnnotation))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(east.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(written), "the relocate back lost writes")
	})
})

// completed waits until the pair's last switch completed.
func completed(ctx context.Context, pair *schedulingv1alpha1.LocationPair) {
	GinkgoHelper()
	generation := pair.Generation
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		a := pair.Status.LastAction
		g.Expect(a).NotTo(BeNil())
		g.Expect(a.Generation).To(BeNumerically(">", generation))
		g.Expect(a.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted), "%s since %s", a.Progression, a.ProgressionTime)
	}).WithContext(ctx).Should(Succeed())
}

// copyClass is the storage class of the claim's copy in the member of target key.
func copyClass(ctx context.Context, key, ns, name string) string {
	GinkgoHelper()
	c := &corev1.PersistentVolumeClaim{}
	Expect(env.Member(key).Client.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, key, ns), Name: name}, c)).To(Succeed())
	return ptr.Deref(c.Spec.StorageClassName, "")
}
