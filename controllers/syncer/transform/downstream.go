package transform

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Kinds the syncer treats specially.
var (
	NamespaceKind = schema.GroupKind{Kind: "Namespace"}
	PVKind        = schema.GroupKind{Kind: "PersistentVolume"}
	PVCKind       = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	ServiceKind   = schema.GroupKind{Kind: "Service"}
	JobKind       = schema.GroupKind{Group: "batch", Kind: "Job"}
	// StatefulSetKind is a StatefulSet, whose claims the hub keeps (controllers/statefulset).
	StatefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
)

// jobUIDLabels are the labels a cluster generates for a Job's selector from the Job's UID.
var jobUIDLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid"}

// binderAnnotations are written by a cluster's PV binder on its own PVCs and PVs. They
// describe a binding in that cluster only, so they never cross in either direction.
var binderAnnotations = sets.New(
	"pv.kubernetes.io/bind-completed",
	"pv.kubernetes.io/bound-by-controller",
	"volume.kubernetes.io/selected-node",
	"volume.kubernetes.io/storage-provisioner",
	"volume.beta.kubernetes.io/storage-provisioner",
)

// clusterLabels are labels a cluster sets on its own objects from their names, so a copy
// from another cluster would carry a wrong one. kubectl's last applied configuration is the
// user's object in the cluster they applied it to; in another it would mislead a kubectl
// apply there, and the syncer's caches leave it out.
var clusterLabels = sets.New(corev1.LabelMetadataName, corev1.LastAppliedConfigAnnotation)

// syncerKeys are the syncer's own downstream labels and annotations. ReleasePolicyAnnotation
// is among them: on a member PV it keeps the policy the syncer gave it there, which must
// neither reach the hub nor come back down to another member's copy.
var syncerKeys = sets.New(TargetLabel, HubLabel, HubNamespaceAnnotation, HubNameAnnotation, AppliedAnnotation, OriginAnnotation, HubClaimAnnotation,
	ProvisionedPolicyAnnotation, storagev1alpha1.ReleasePolicyAnnotation)

// crosses tells whether a label or annotation is copied between the hub and a member.
func crosses(key string) bool {
	return !binderAnnotations.Has(key) && !clusterLabels.Has(key) && !syncerKeys.Has(key) && !workloadv1alpha1.IsProtocolKey(key)
}

// crossing returns the entries of m that cross, merged with extra; nil when empty.
func crossing(m map[string]string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if crosses(k) {
			out[k] = v
		}
	}
	maps.Copy(out, extra)
	if len(out) == 0 {
		return nil
	}
	return out
}

// Inputs are what the downstream copy of a hub object depends on besides the object.
type Inputs struct {
	// Current is the downstream object as it is, nil when there is none yet. The fields the
	// member's binder owns are kept from it.
	Current *unstructured.Unstructured
	// VolumeName is the downstream name of the PV that a PVC names on the hub. Empty leaves
	// the PVC's binding to the member.
	VolumeName string
	// NodeSelector and Tolerations come from the SyncTarget's spec; they go into pod
	// templates, under the user's own values.
	NodeSelector map[string]string
	Tolerations  []corev1.Toleration
	// Unbind clears the uid and resourceVersion of a PV's claimRef instead of keeping them
	// from Current: they name a copy of the claim that is gone (see Unbinds).
	Unbind bool
}

// DownstreamName is the name of the hub object's downstream copy.
func (t Target) DownstreamName(up *unstructured.Unstructured) string {
	switch up.GroupVersionKind().GroupKind() {
	case NamespaceKind:
		return t.Namespace(up.GetName())
	case PVKind:
		return t.PVName(up.GetName(), up.GetAnnotations())
	}
	return up.GetName()
}

// DownstreamNamespace is the namespace of the hub object's downstream copy; empty for
// cluster-scoped objects.
func (t Target) DownstreamNamespace(up *unstructured.Unstructured) string {
	if up.GetNamespace() == "" {
		return ""
	}
	return t.Namespace(up.GetNamespace())
}

// Downstream returns the object to apply in the member for the hub object up: its content
// (everything but metadata and status), under the translated namespace and name, with the
// labels and annotations that cross, the syncer's markers, and the per-kind rewrites.
func (t Target) Downstream(up *unstructured.Unstructured, in Inputs) (*unstructured.Unstructured, error) {
	down := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range up.Object {
		if k != "metadata" && k != "status" {
			down.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	gk := up.GroupVersionKind().GroupKind()
	down.SetName(t.DownstreamName(up))
	down.SetNamespace(t.DownstreamNamespace(up))
	back := map[string]string{HubNameAnnotation: up.GetName()}
	switch {
	case gk == NamespaceKind:
		back[HubNamespaceAnnotation] = up.GetName()
	case up.GetNamespace() != "":
		back[HubNamespaceAnnotation] = up.GetNamespace()
	}
	down.SetLabels(crossing(up.GetLabels(), t.Markers()))
	down.SetAnnotations(crossing(up.GetAnnotations(), back))

	// The member binder's fields of a PV's claimRef, kept from the current copy but left out
	// of the hash: binding the copy must not make it look changed upstream.
	var binder map[string]any
	switch gk {
	case NamespaceKind:
		// A namespace's spec holds its finalizers, which only its own cluster manages.
		delete(down.Object, "spec")
	case PVKind:
		binder = t.rewriteClaimRef(down, in.Current)
		if in.Unbind {
			binder = map[string]any{"uid": "", "resourceVersion": ""}
		}
		if err := unstructured.SetNestedField(down.Object, string(CopyReclaimPolicy(in.Current)), "spec", "persistentVolumeReclaimPolicy"); err != nil {
			return nil, err
		}
	case PVCKind:
		unstructured.RemoveNestedField(down.Object, "spec", "volumeName")
		if err := copyClass(up, down, in.Current); err != nil {
			return nil, err
		}
		if in.VolumeName != "" {
			if err := unstructured.SetNestedField(down.Object, in.VolumeName, "spec", "volumeName"); err != nil {
				return nil, err
			}
		}
		// Only a copy that the member provisions is made from the replica; a copy made so
		// keeps the data source it was made with, as a claim's data source cannot change, also
		// once the hub claim no longer asks for the restore.
		switch {
		case hasDataSource(in.Current):
			keepDataSource(in.Current, down)
		case in.VolumeName == "":
			if err := t.restoreFrom(up, down); err != nil {
				return nil, err
			}
		}
	case ServiceKind:
		stripAllocated(down)
	case JobKind:
		stripGeneratedSelector(down)
	case StatefulSetKind:
		if err := retainClaims(down); err != nil {
			return nil, err
		}
	}
	if err := placePods(down, in.Current, in.NodeSelector, in.Tolerations); err != nil {
		return nil, err
	}
	annotations := down.GetAnnotations()
	annotations[AppliedAnnotation] = hash(down.Object)
	down.SetAnnotations(annotations)
	for k, v := range binder {
		if err := unstructured.SetNestedField(down.Object, v, "spec", "claimRef", k); err != nil {
			return nil, err
		}
	}
	return down, nil
}

// Restores tells whether the hub claim asks this target to restore it from a replica.
func (t Target) Restores(up metav1.Object) bool {
	return t.Replica(up) != ""
}

// Replica is the VolumeSnapshot the hub claim asks this target to restore it from, if any:
// its name, or namespace/name for a replica of another hub namespace (see ReplicaOf).
func (t Target) Replica(up metav1.Object) string {
	key, snapshot, _ := storagev1alpha1.RestoreFrom(up.GetAnnotations())
	if key != t.Key {
		return ""
	}
	return snapshot
}

// restoreFrom makes a claim's copy, when the hub claim asks this target to restore it, from
// the VolumeSnapshot the annotation names, or the one the syncer imports it as
// (RestoreSource): both dataSource fields name it, as the API server keeps them equal.
func (t Target) restoreFrom(up, down *unstructured.Unstructured) error {
	snapshot := t.RestoreSource(up)
	if snapshot == "" {
		return nil
	}
	ref := map[string]any{"apiGroup": snapshotGroup, "kind": "VolumeSnapshot", "name": snapshot}
	if err := unstructured.SetNestedMap(down.Object, ref, "spec", "dataSourceRef"); err != nil {
		return err
	}
	return unstructured.SetNestedMap(down.Object, runtime.DeepCopyJSONValue(ref).(map[string]any), "spec", "dataSource")
}

// copyClass gives a claim's copy the class its volume has where the claim runs (a
// LocationPair may map the class the claim names to another there): the hub claim's
// storage-class annotation, if any. A copy that exists keeps the class it has, which cannot
// change.
func copyClass(up, down, current *unstructured.Unstructured) error {
	if c := up.GetAnnotations()[storagev1alpha1.StorageClassAnnotation]; c != "" {
		if err := unstructured.SetNestedField(down.Object, c, "spec", "storageClassName"); err != nil {
			return err
		}
	}
	want, set, _ := unstructured.NestedString(down.Object, "spec", "storageClassName")
	if current == nil || !set {
		return nil
	}
	if have, found, _ := unstructured.NestedString(current.Object, "spec", "storageClassName"); found && have != want {
		return unstructured.SetNestedField(down.Object, have, "spec", "storageClassName")
	}
	return nil
}

// keepDataSource copies the data source fields of the claim copy current into down.
func keepDataSource(current, down *unstructured.Unstructured) {
	for _, f := range []string{"dataSource", "dataSourceRef"} {
		if v, found, _ := unstructured.NestedFieldCopy(current.Object, "spec", f); found {
			_ = unstructured.SetNestedField(down.Object, v, "spec", f)
		}
	}
}

// hasDataSource tells whether the claim copy exists and names a data source.
func hasDataSource(current *unstructured.Unstructured) bool {
	if current == nil {
		return false
	}
	_, found, _ := unstructured.NestedMap(current.Object, "spec", "dataSourceRef")
	return found
}

// rewriteClaimRef points a PV's claimRef at the downstream claim, by namespace and name
// only, and returns the uid and resourceVersion to keep: they are the member binder's, taken
// from the current object when it refers to the same claim, never copied from the hub.
func (t Target) rewriteClaimRef(pv *unstructured.Unstructured, current *unstructured.Unstructured) map[string]any {
	ref, found, _ := unstructured.NestedMap(pv.Object, "spec", "claimRef")
	if !found {
		return nil
	}
	name, _ := ref["name"].(string)
	out := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": name}
	if ns, _ := ref["namespace"].(string); ns != "" {
		out["namespace"] = t.Namespace(ns)
	}
	_ = unstructured.SetNestedMap(pv.Object, out, "spec", "claimRef")
	if current == nil {
		return nil
	}
	cur, found, _ := unstructured.NestedMap(current.Object, "spec", "claimRef")
	if !found || cur["namespace"] != out["namespace"] || cur["name"] != name {
		return nil
	}
	binder := map[string]any{}
	for _, k := range []string{"uid", "resourceVersion"} {
		if v, ok := cur[k]; ok {
			binder[k] = v
		}
	}
	return binder
}

// Unbinds tells whether the member's PV current is bound to a copy of its claim that is
// gone, while the hub claim it belongs to lives on: the PV is Released, kept (Retain), and
// the hub claim that up, the hub PV, names is not being deleted and names up as its volume
// (and has the uid up names, if any). A claim that left the target and came back before its
// PV left has a new copy, which the member's binder never binds to a PV whose claimRef
// names the old copy's uid. A claim deleted, or made again under its name, does not get the
// PV back: that one names no volume, as only coordination binds a hub claim, to the PV
// provisioned for it.
func Unbinds(current, up, claim *unstructured.Unstructured) bool {
	if current == nil || claim == nil || claim.GetDeletionTimestamp() != nil {
		return false
	}
	phase, _, _ := unstructured.NestedString(current.Object, "status", "phase")
	policy, _, _ := unstructured.NestedString(current.Object, "spec", "persistentVolumeReclaimPolicy")
	volume, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName")
	uid, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "uid")
	return phase == string(corev1.VolumeReleased) && policy == string(corev1.PersistentVolumeReclaimRetain) &&
		volume == up.GetName() && (uid == "" || uid == string(claim.GetUID()))
}

// stripAllocated removes the addresses and ports that the hub allocated for a Service: the
// member allocates its own. A headless Service keeps its clusterIP None.
func stripAllocated(svc *unstructured.Unstructured) {
	if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip != corev1.ClusterIPNone {
		unstructured.RemoveNestedField(svc.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(svc.Object, "spec", "clusterIPs")
	}
	unstructured.RemoveNestedField(svc.Object, "spec", "ipFamilies")
	unstructured.RemoveNestedField(svc.Object, "spec", "healthCheckNodePort")
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	for _, p := range ports {
		if port, ok := p.(map[string]any); ok {
			delete(port, "nodePort")
		}
	}
	if ports != nil {
		_ = unstructured.SetNestedSlice(svc.Object, ports, "spec", "ports")
	}
}

// stripGeneratedSelector removes the selector a cluster generated for a Job from the Job's
// UID, and the matching template labels: the member generates its own, and refuses a Job
// that brings one it did not generate. A selector the user chose (manualSelector) stays.
func stripGeneratedSelector(job *unstructured.Unstructured) {
	if manual, _, _ := unstructured.NestedBool(job.Object, "spec", "manualSelector"); manual {
		return
	}
	unstructured.RemoveNestedField(job.Object, "spec", "selector")
	for _, l := range jobUIDLabels {
		unstructured.RemoveNestedField(job.Object, "spec", "template", "metadata", "labels", l)
	}
}

// retainClaims gives a StatefulSet's copy the claim retention policy Retain for both scaling
// and deletion. The hub carries out the set's own policy on the hub claims, and coordination
// releases a deleted claim's volume on its member; the member's StatefulSet controller must not
// own the syncer's claims, as its garbage collector would then delete them behind
// coordination's back, before it gave their volumes the claim's release policy.
func retainClaims(set *unstructured.Unstructured) error {
	retain := string(appsv1.RetainPersistentVolumeClaimRetentionPolicyType)
	return unstructured.SetNestedStringMap(set.Object, map[string]string{"whenDeleted": retain, "whenScaled": retain},
		"spec", "persistentVolumeClaimRetentionPolicy")
}

// CopyReclaimPolicy is the reclaim policy of a member's copy of a hub PV: Retain, so that the
// storage is released only through the claim, with the policy coordination puts on it; once a
// claim leaving the member gave its PV a release policy (ReleasePolicyAnnotation on the
// member's PV), that one, until the member has released the volume.
func CopyReclaimPolicy(current *unstructured.Unstructured) corev1.PersistentVolumeReclaimPolicy {
	if current != nil {
		if p := current.GetAnnotations()[storagev1alpha1.ReleasePolicyAnnotation]; p != "" {
			return corev1.PersistentVolumeReclaimPolicy(p)
		}
	}
	return corev1.PersistentVolumeReclaimRetain
}

// ReleasePolicy is the reclaim policy a claim's member PV takes just before the claim leaves
// the member: the one coordination set on a deleted claim, else Retain.
func ReleasePolicy(claim *unstructured.Unstructured) corev1.PersistentVolumeReclaimPolicy {
	if p := claim.GetAnnotations()[storagev1alpha1.ReleasePolicyAnnotation]; p != "" && claim.GetDeletionTimestamp() != nil {
		return corev1.PersistentVolumeReclaimPolicy(p)
	}
	return corev1.PersistentVolumeReclaimRetain
}
