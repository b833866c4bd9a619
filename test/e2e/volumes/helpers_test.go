package volumes

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

const domain = "shared"

// app creates a namespace placed on one target of each of the Locations, and returns it.
func app(ctx context.Context, locations ...string) string {
	name := "app-" + rand.String(5)
	Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}}})).To(Succeed())
	for _, loc := range locations {
		Expect(hub.Create(ctx, placementFor(name, loc))).To(Succeed())
	}
	return name
}

// placementFor places the namespaces labelled app=<app> on the Location.
func placementFor(app, loc string) *schedulingv1alpha1.Placement {
	return &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + loc},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationName:      loc,
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		},
	}
}

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

// member is the cluster of a target; in this environment target names are member names.
func member(key string) *testbed.Cluster {
	m := env.Member(key)
	Expect(m).NotTo(BeNil(), "no member %s", key)
	return m
}

// downClaim is the key of a hub claim's copy in the member of the target.
func downClaim(key, ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: transform.Target{Key: key, Hub: hubID}.Namespace(ns), Name: name}
}

// downPV returns the member's PV bound to the copy of the hub claim.
func downPV(ctx context.Context, key, ns, name string) *corev1.PersistentVolume {
	GinkgoHelper()
	m := member(key)
	pvc := &corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		g.Expect(m.Client.Get(ctx, downClaim(key, ns, name), pvc)).To(Succeed())
		g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
	}).WithContext(ctx).Should(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(m.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
	return pv
}

func targetObject(name string) *workloadv1alpha1.SyncTarget {
	return &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// patchTarget changes the SyncTarget's spec with change, in one merge patch.
func patchTarget(ctx context.Context, target string, change func(*workloadv1alpha1.SyncTargetSpec)) {
	GinkgoHelper()
	Expect(environment.PatchTarget(ctx, hub, target, change)).To(Succeed())
}

func setCordon(ctx context.Context, target string, cordoned bool) {
	GinkgoHelper()
	Expect(environment.Cordon(ctx, hub, target, cordoned)).To(Succeed())
}

// setFenceDelay sets the target's own fence delay; nil takes it away.
func setFenceDelay(ctx context.Context, target string, delay *metav1.Duration) {
	patchTarget(ctx, target, func(s *workloadv1alpha1.SyncTargetSpec) { s.FenceDelay = delay })
}

// setFencing sets the target's spec.fencing; nil takes it away.
func setFencing(ctx context.Context, target string, fencing *workloadv1alpha1.FencingSpec) {
	patchTarget(ctx, target, func(s *workloadv1alpha1.SyncTargetSpec) { s.Fencing = fencing })
}

// volume is the ledger's record of a handle.
func volume(h string) simstorage.Volume {
	v, ok := storage.Volume(h)
	Expect(ok).To(BeTrue(), "no volume %s in the ledger", h)
	return v
}

// gone waits until the hub object is deleted; while it is not, the failure shows what holds it.
func gone(ctx context.Context, obj client.Object) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		err := hub.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s still there: deleted %v, finalizers %v, labels %v, annotations %v (err %v)",
			client.ObjectKeyFromObject(obj), obj.GetDeletionTimestamp(), obj.GetFinalizers(), obj.GetLabels(), obj.GetAnnotations(), err)
	}).WithContext(ctx).Should(Succeed())
}
