package volumes

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// A member's clean report lifts its Fence, so it must not skip what it cannot place: a PV
// whose class no longer names its storage domain counts against every domain of the target.
var _ = Describe("A fenced member's clean report", func() {
	It("is not clean while the member holds a PV whose class lost its storage domain, and the Fence stays until the PV is gone", func(ctx SpecContext) {
		ns, lost, _ := ownedVolume(ctx)
		By("keeping the owner's PV copy from going, then partitioning the owner: its volume moves under a Fence")
		release := keepPV(ctx, lost, downPV(ctx, lost, ns, "data"))
		loseMember(ctx, lost, true)
		failedOver(ctx, ns, lost)

		By("taking the storage domain annotation from the owner's class while it is away, then bringing it back")
		setClassDomain(ctx, lost, "")
		DeferCleanup(setClassDomain, context.Background(), lost, domain)
		Expect(env.StartMember(ctx, lost)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.ConditionReady).Status).To(Equal(metav1.ConditionTrue))
			err := framework.Member(env.Bed, lost).Client.Get(ctx, framework.CopyKey(hubID, lost, ns, "data"), &corev1.PersistentVolumeClaim{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the claim's copy is still in %s", lost)
			c := targetCondition(ctx, g, lost, workloadv1alpha1.CleanCondition(domain))
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
			g.Expect(c.Message).To(ContainSubstring("PersistentVolume"))
			g.Expect(c.Message).To(ContainSubstring("its storage class %s names no storage domain", domain))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(targetCondition(ctx, g, lost, workloadv1alpha1.CleanCondition(domain)).Status).To(Equal(metav1.ConditionFalse))
			f := &storagev1alpha1.Fence{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}, f)).To(Succeed())
			g.Expect(f.Spec.State).NotTo(Equal(storagev1alpha1.Unfenced), "the Fence is being lifted")
			g.Expect(f.Status.Phase).To(Equal(storagev1alpha1.FenceFenced))
			g.Expect(storage.Fenced(lost)).To(BeTrue(), "the storage let %s back in", lost)
		}).WithContext(ctx).Should(Succeed())

		By("letting the PV go: the report turns clean and the Fence is lifted, the class still without its annotation")
		release(ctx)
		comesBack(ctx, lost, ns)
		Expect(targetCondition(ctx, Default, lost, workloadv1alpha1.CleanCondition(domain)).Status).To(Equal(metav1.ConditionTrue))
	})
})

// setClassDomain sets the storage domain annotation of the member's class of the suite's
// domain, or takes it away when d is "".
func setClassDomain(ctx context.Context, key, d string) {
	GinkgoHelper()
	c := framework.Member(env.Bed, key).Client
	sc := &storagev1.StorageClass{}
	Expect(c.Get(ctx, client.ObjectKey{Name: domain}, sc)).To(Succeed())
	patch := client.MergeFrom(sc.DeepCopy())
	if d == "" {
		delete(sc.Annotations, storagev1alpha1.DomainAnnotation)
	} else {
		metav1.SetMetaDataAnnotation(&sc.ObjectMeta, storagev1alpha1.DomainAnnotation, d)
	}
	Expect(c.Patch(ctx, sc, patch)).To(Succeed())
}
