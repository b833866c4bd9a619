package security

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A namespace user", func() {
	It("cannot place an object where no Placement put it, and an object so labelled is not synced; Pods follow their namespace", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		running := pod(ns, "runs")
		Expect(user.Create(ctx, running)).To(Succeed())
		Eventually(func() error {
			return env.Member(key).Client.Get(ctx, framework.CopyKey(hubID, key, ns, "runs"), &corev1.Pod{})
		}).WithContext(ctx).Should(Succeed(), "a Pod of a placed namespace runs where its namespace does")

		elsewhere := environment.Other(key)
		By("labelling a Pod of a placed namespace for the other target")
		expectRefused(patch(ctx, user, client.ObjectKeyFromObject(running), &corev1.Pod{}, func(p *corev1.Pod) {
			workloadv1alpha1.SetState(p, elsewhere, workloadv1alpha1.ResourceStateSync)
		}), ruleKeys)
		By("creating a Pod labelled for a target in a namespace placed nowhere")
		away, awayUser := tenant(ctx, false)
		planted := pod(away, "planted")
		workloadv1alpha1.SetState(planted, elsewhere, workloadv1alpha1.ResourceStateSync)
		expectRefused(awayUser.Create(ctx, planted), ruleKeys)

		By("an object labelled so all the same, by an admin")
		Expect(hub.Create(ctx, planted)).To(Succeed())
		Consistently(func() error {
			return env.Member(elsewhere).Client.Get(ctx, framework.CopyKey(hubID, elsewhere, away, "planted"), &corev1.Pod{})
		}).WithContext(ctx).ShouldNot(Succeed(), "only a Placement decides where objects run")
	})

	It("may leave its own claim out of its pair's protection, and set no other key of Custody's on it, its volume's mapped storage class included", func(ctx SpecContext) {
		ns, user := tenant(ctx, false)
		claim := environment.Claim(ns, "scratch", domain, corev1.ReadWriteOnce)
		claim.Labels = map[string]string{storagev1alpha1.ProtectLabel: "false"}
		Expect(user.Create(ctx, claim, client.DryRunAll)).To(Succeed())
		claim.Annotations = map[string]string{storagev1alpha1.ReleasePolicyAnnotation: string(corev1.PersistentVolumeReclaimDelete)}
		expectRefused(user.Create(ctx, claim, client.DryRunAll), ruleKeys)
		claim.Annotations = map[string]string{storagev1alpha1.ProtectLabel: "false"}
		expectRefused(user.Create(ctx, claim, client.DryRunAll), ruleKeys)
		// The class a pair's map gives the claim's volume is the dr controller's to write.
		claim.Annotations = map[string]string{storagev1alpha1.StorageClassAnnotation: "other"}
		expectRefused(user.Create(ctx, claim, client.DryRunAll), ruleKeys)
		labelled := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other", Labels: map[string]string{storagev1alpha1.ProtectLabel: "false"}}}
		expectRefused(user.Create(ctx, labelled, client.DryRunAll), ruleKeys)
	})

	It("cannot start a drill, nor restore a claim from a replica of another namespace, as a drill's sandbox is", func(ctx SpecContext) {
		ns, user := tenant(ctx, false)
		drill := &schedulingv1alpha1.Drill{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: schedulingv1alpha1.DrillSpec{Pair: ns}}
		expectDenied(user.Create(ctx, drill, client.DryRunAll))
		claim := environment.Claim(ns, "stolen", domain, corev1.ReadWriteOnce)
		claim.Annotations = map[string]string{storagev1alpha1.RestoreAnnotation: "m1/other-tenant/volsync-data-dst-1"}
		expectRefused(user.Create(ctx, claim, client.DryRunAll), ruleKeys)
		sandbox := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sandbox", Labels: map[string]string{schedulingv1alpha1.DrillLabel: ns}}}
		expectRefused(user.Create(ctx, sandbox, client.DryRunAll), ruleKeys)
	})

	It("does not decide whether storage is released: a claim deleted while its owner is cut off keeps the storage of a hub PV set to Retain", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		claim := environment.Claim(ns, "data", domain, corev1.ReadWriteOnce)
		Expect(user.Create(ctx, claim)).To(Succeed())
		vo := &storagev1alpha1.VolumeOwnership{}
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(claim), vo)).To(Succeed())
			g.Expect(vo.Status.Settled()).To(BeTrue(), "%s/%s", vo.Status.Phase, vo.Status.Reason)
		}).WithContext(ctx).Should(Succeed())
		owner, pvName := vo.Status.Owner, vo.Status.VolumeName
		pv := &corev1.PersistentVolume{}
		Expect(patch(ctx, hub, client.ObjectKey{Name: pvName}, pv, func(pv *corev1.PersistentVolume) {
			pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		})).To(Succeed(), "an admin keeps the volume")
		handle := pv.Spec.CSI.VolumeHandle

		By("asking for the storage's release on the claim")
		expectRefused(patch(ctx, user, client.ObjectKeyFromObject(claim), &corev1.PersistentVolumeClaim{}, func(c *corev1.PersistentVolumeClaim) {
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(corev1.PersistentVolumeReclaimDelete))
		}), ruleKeys)
		By("naming the kept volume in a claim of its own")
		taker := environment.Claim(ns, "taker", domain, corev1.ReadWriteOnce)
		taker.Spec.VolumeName = pvName
		expectRefused(user.Create(ctx, taker), ruleBinding)

		By("deleting the claim while its owner is cut off, and bringing the owner back")
		Expect(env.StopMember(owner, true)).To(Succeed())
		Expect(user.Delete(ctx, claim)).To(Succeed())
		Expect(env.StartMember(ctx, owner)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: pvName}, pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			v, ok := storage.Volume(handle)
			g.Expect(ok).To(BeTrue())
			g.Expect(v.Releases).To(BeZero())
			g.Expect(v.Deleted).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
	})
})

// pod is a Pod of one container.
func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}},
	}
}
