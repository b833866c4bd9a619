package transform

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// UpsyncPV returns the hub PV that records pv, a PV the member provisioned and bound to the
// downstream copy of the hub claim. It carries everything needed to use the volume in another
// member: the volume source with its handle, capacity, access modes, class, node affinity,
// mount options and reclaim policy: the one the member provisioned it with
// (ProvisionedPolicyAnnotation), which the syncer may have changed to Retain. Its claimRef
// names the hub claim without a uid, its state label for this target is Upsync, and
// PVNameAnnotation keeps the member's name for it.
func (t Target) UpsyncPV(pv *corev1.PersistentVolume, claim metav1.Object) *corev1.PersistentVolume {
	out := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        workloadv1alpha1.UpsyncedPVName(claim.GetUID()),
			Labels:      crossing(pv.Labels, nil),
			Annotations: crossing(pv.Annotations, map[string]string{workloadv1alpha1.PVNameAnnotation(t.Key): pv.Name}),
		},
		Spec:   *pv.Spec.DeepCopy(),
		Status: *pv.Status.DeepCopy(),
	}
	out.Spec.ClaimRef = &corev1.ObjectReference{
		APIVersion: "v1", Kind: "PersistentVolumeClaim",
		Namespace: claim.GetNamespace(), Name: claim.GetName(),
	}
	if p := pv.Annotations[ProvisionedPolicyAnnotation]; p != "" {
		out.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimPolicy(p)
	}
	workloadv1alpha1.SetState(out, t.Key, workloadv1alpha1.ResourceStateUpsync)
	return out
}

// KeepProvisioned makes pv, a PV the member provisioned for a copy of a hub claim, Retain
// before the hub records it, keeping the policy it came with in ProvisionedPolicyAnnotation;
// it tells whether pv changed. A volume the hub recorded is then released only through the
// syncer, with the policy coordination gives the claim: the copy may go without it, as when
// the member deletes its namespace, which would otherwise release storage the hub counts on.
// A policy the syncer gave the PV (ReleasePolicyAnnotation) stays.
func KeepProvisioned(pv *corev1.PersistentVolume) bool {
	if pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain || pv.Annotations[storagev1alpha1.ReleasePolicyAnnotation] != "" {
		return false
	}
	if pv.Annotations[ProvisionedPolicyAnnotation] == "" {
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, ProvisionedPolicyAnnotation, string(pv.Spec.PersistentVolumeReclaimPolicy))
	}
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	return true
}

// Origin returns the hub PV and the hub claim that pv, a PV the member provisioned, was
// upsynced for; ok is false for any other object.
func (t Target) Origin(pv metav1.Object) (hubPV, hubClaim types.NamespacedName, ok bool) {
	hubPV, ok = t.Upstream(pv, false)
	if !ok || !t.IsOrigin(pv) {
		return hubPV, hubClaim, false
	}
	claim, _ := Annotation(pv, HubClaimAnnotation)
	ns, name, _ := strings.Cut(claim, "/")
	return hubPV, types.NamespacedName{Namespace: ns, Name: name}, true
}

// UpsyncedFor tells whether the hub PV called hubPV records the volume the member
// provisioned for claim: it is named after the claim's UID, so a claim deleted and made
// again under the same name is not the one it was upsynced for.
func UpsyncedFor(hubPV string, claim metav1.Object) bool {
	return hubPV == workloadv1alpha1.UpsyncedPVName(claim.GetUID())
}
