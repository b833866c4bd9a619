package volumes

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
)

const domain = "shared"

func claim(ctx context.Context, ns, name string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	c := claimObject(ns, name, mode)
	Expect(hub.Create(ctx, c)).To(Succeed())
	return c
}

func claimObject(ns, name string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	return environment.Claim(ns, name, domain, mode)
}

func ownership(ctx context.Context, ns, name string) *storagev1alpha1.VolumeOwnership {
	vo := &storagev1alpha1.VolumeOwnership{}
	Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vo)).To(Succeed())
	return vo
}

// waitFor waits until the claim's VolumeOwnership passes check, and returns it.
func waitFor(ctx context.Context, ns, name string, check func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus)) *storagev1alpha1.VolumeOwnership {
	GinkgoHelper()
	vo := &storagev1alpha1.VolumeOwnership{}
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vo)).To(Succeed())
		check(g, vo.Status)
	}).WithContext(ctx).Should(Succeed())
	return vo
}

// bound waits until the volume is Bound, and returns its VolumeOwnership.
func bound(ctx context.Context, ns, name string) *storagev1alpha1.VolumeOwnership {
	GinkgoHelper()
	return waitFor(ctx, ns, name, func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
		g.Expect(st.Settled()).To(BeTrue(), "%s/%s: %s", st.Phase, st.Reason, st.Message)
		g.Expect(st.VolumeName).NotTo(BeEmpty())
	})
}

// ownedData makes an app namespace on loc with a ReadWriteOnce claim "data", and returns
// them once the volume is bound, with its VolumeOwnership and its storage's handle.
func ownedData(ctx context.Context) (ns string, c *corev1.PersistentVolumeClaim, vo *storagev1alpha1.VolumeOwnership, h string) {
	GinkgoHelper()
	ns = framework.App(ctx, hub, "loc")
	c = claim(ctx, ns, "data", corev1.ReadWriteOnce)
	vo = bound(ctx, ns, "data")
	return ns, c, vo, handle(ctx, vo.Status.VolumeName)
}

func hubPV(ctx context.Context, name string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: name}, pv)).To(Succeed())
	return pv
}

// handle is the storage volume behind a hub PV.
func handle(ctx context.Context, pvName string) string {
	pv := hubPV(ctx, pvName)
	Expect(pv.Spec.CSI).NotTo(BeNil())
	return pv.Spec.CSI.VolumeHandle
}

// holders waits until the ledger shows the volume held by exactly the members.
func holders(ctx context.Context, h string, members ...string) {
	GinkgoHelper()
	Eventually(func() []string {
		v, _ := storage.Volume(h)
		return v.Holders
	}).WithContext(ctx).Should(ConsistOf(members))
}

// downPV returns the member's PV bound to the copy of the hub claim.
func downPV(ctx context.Context, key, ns, name string) *corev1.PersistentVolume {
	GinkgoHelper()
	m := framework.Member(env.Bed, key)
	pvc := &corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		g.Expect(m.Client.Get(ctx, framework.CopyKey(hubID, key, ns, name), pvc)).To(Succeed())
		g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
	}).WithContext(ctx).Should(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(m.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
	return pv
}

func targetObject(name string) *workloadv1alpha1.SyncTarget {
	return &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// setFenceDelay sets the target's own fence delay; nil takes it away.
func setFenceDelay(ctx context.Context, target string, delay *metav1.Duration) {
	framework.PatchTarget(ctx, hub, target, func(s *workloadv1alpha1.SyncTargetSpec) { s.FenceDelay = delay })
}

// setFencing sets the target's spec.fencing; nil takes it away.
func setFencing(ctx context.Context, target string, fencing *workloadv1alpha1.FencingSpec) {
	framework.PatchTarget(ctx, hub, target, func(s *workloadv1alpha1.SyncTargetSpec) { s.Fencing = fencing })
}

// volume is the ledger's record of a handle.
func volume(h string) simstorage.Volume {
	v, ok := storage.Volume(h)
	Expect(ok).To(BeTrue(), "no volume %s in the ledger", h)
	return v
}
