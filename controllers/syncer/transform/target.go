package transform

import (
	"crypto/sha256"
	"maps"
	"math/big"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Labels and annotations the syncer puts on every downstream object it creates. The labels
// mark what it created, so that it touches nothing else; the annotations point back to the
// hub object.
const (
	// TargetLabel holds the key of the target whose syncer created the object.
	TargetLabel = "workload.custody.dev/sync-target"
	// HubLabel holds the identity of the hub the object came from.
	HubLabel = "workload.custody.dev/hub"
	// HubNamespaceAnnotation names the hub namespace of the object (for a downstream
	// namespace: the hub namespace it stands for).
	HubNamespaceAnnotation = "workload.custody.dev/hub-namespace"
	// HubNameAnnotation names the hub object.
	HubNameAnnotation = "workload.custody.dev/hub-name"
	// AppliedAnnotation holds a hash of what the syncer last applied, so that a change
	// upstream, removals included, shows without reading managed fields.
	AppliedAnnotation = "workload.custody.dev/applied"
	// OriginAnnotation marks a PV the member provisioned for a claim synced to the target,
	// before its hub record is made: it holds the target key and the hub identity as
	// "key/hub"; HubNameAnnotation names the hub PV, and HubClaimAnnotation the hub claim. A
	// PV so marked is the syncer's to remove once the hub gives the target neither of them,
	// as a copy is.
	OriginAnnotation = "workload.custody.dev/origin"
	// HubClaimAnnotation names the hub claim of a PV the member provisioned, as
	// "namespace/name".
	HubClaimAnnotation = "workload.custody.dev/hub-claim"
	// ProvisionedPolicyAnnotation keeps the reclaim policy a PV the member provisioned for a
	// copy of a hub claim came with, once the syncer made it Retain (KeepProvisioned): the
	// hub PV records that one.
	ProvisionedPolicyAnnotation = "workload.custody.dev/provisioned-reclaim-policy"
)

// KeepLabel keeps VolSync from deleting a VolumeSnapshot it took: the snapshot is then
// whoever labelled it's. The syncer puts it on the replica a claim's copy is restored from
// (downsync) and on the images a VolumeReplication asks to keep (replication).
const KeepLabel = "volsync.backube/do-not-delete"

// namePrefix starts every name the syncer makes up downstream.
const namePrefix = "custody-"

// FieldManager owns every field the syncer applies: its downstream objects in the member,
// and the status it reports on the hub. Every syncer uses the same one, so that a target
// that becomes the status reporter of a hub object takes over the fields of the last one.
const FieldManager = "custody-syncer"

// Target is what the syncer of one target knows about itself: its key and the identity of
// its hub. Everything it names downstream derives from these two and the hub object.
type Target struct {
	// Key is the target key, ToSyncTargetKey of the SyncTarget's name.
	Key string
	// Hub is the hub's identity: the UID of its kube-system namespace.
	Hub string
}

// Namespace is the downstream namespace for a hub namespace.
func (t Target) Namespace(hubNamespace string) string {
	return namePrefix + t.hash("namespace", hubNamespace)
}

// PVName is the downstream name of a hub PV, given the PV's annotations: the name recorded in
// PVNameAnnotation for this target when there is one (the PV was provisioned in this
// member), else a translated name.
func (t Target) PVName(hubName string, annotations map[string]string) string {
	if name := annotations[workloadv1alpha1.PVNameAnnotation(t.Key)]; name != "" {
		return name
	}
	return namePrefix + t.hash("persistentvolume", hubName)
}

// hash is a short, DNS-label-safe digest of the target, the hub and the parts.
func (t Target) hash(parts ...string) string {
	h := sha256.New()
	for _, p := range append([]string{t.Hub, t.Key}, parts...) {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return new(big.Int).SetBytes(h.Sum(nil)).Text(36)[:16]
}

// Markers are the labels that mark a downstream object as created by this syncer.
func (t Target) Markers() map[string]string {
	return map[string]string{TargetLabel: t.Key, HubLabel: t.Hub}
}

// Selector selects the downstream objects this syncer created.
func (t Target) Selector() labels.Selector { return labels.SelectorFromSet(t.Markers()) }

// Given selects the hub objects given to the target: Sync or Upsync for it.
func (t Target) Given() (labels.Selector, error) {
	given, err := labels.NewRequirement(t.StateLabel(), selection.In,
		[]string{string(workloadv1alpha1.ResourceStateSync), string(workloadv1alpha1.ResourceStateUpsync)})
	if err != nil {
		return nil, err
	}
	return labels.NewSelector().Add(*given), nil
}

// Owns tells whether this syncer created the downstream object.
func (t Target) Owns(obj metav1.Object) bool {
	key, _ := Label(obj, TargetLabel)
	hub, _ := Label(obj, HubLabel)
	return key == t.Key && hub == t.Hub
}

// Upstream names the hub object a downstream object of this syncer stands for. For a
// downstream namespace it is the hub namespace; for a PV the member provisioned, the hub PV
// it was upsynced as. ok is false for objects it neither created nor upsynced.
func (t Target) Upstream(obj metav1.Object, isNamespace bool) (key types.NamespacedName, ok bool) {
	if !t.Owns(obj) && !t.IsOrigin(obj) {
		return key, false
	}
	namespace, _ := Annotation(obj, HubNamespaceAnnotation)
	if isNamespace {
		return types.NamespacedName{Name: namespace}, namespace != ""
	}
	name, _ := Annotation(obj, HubNameAnnotation)
	return types.NamespacedName{Namespace: namespace, Name: name}, name != ""
}

// IsOrigin tells whether obj is a PV the member provisioned and this syncer upsynced.
func (t Target) IsOrigin(obj metav1.Object) bool {
	origin, _ := Annotation(obj, OriginAnnotation)
	return origin == t.origin()
}

// MarkOrigin marks pv, which the member provisioned for the hub claim, as upsynced as the
// hub PV hubName.
func (t Target) MarkOrigin(pv metav1.Object, hubName string, claim types.NamespacedName) {
	a := maps.Clone(pv.GetAnnotations())
	if a == nil {
		a = map[string]string{}
	}
	maps.Copy(a, t.originMarks(hubName, claim))
	pv.SetAnnotations(a)
}

// MarkedOrigin tells whether pv carries the marks MarkOrigin puts.
func (t Target) MarkedOrigin(pv metav1.Object, hubName string, claim types.NamespacedName) bool {
	a := pv.GetAnnotations()
	for k, v := range t.originMarks(hubName, claim) {
		if a[k] != v {
			return false
		}
	}
	return true
}

func (t Target) originMarks(hubName string, claim types.NamespacedName) map[string]string {
	return map[string]string{OriginAnnotation: t.origin(), HubNameAnnotation: hubName, HubClaimAnnotation: claim.String()}
}

func (t Target) origin() string { return t.Key + "/" + t.Hub }

// StateLabel is this target's state label key.
func (t Target) StateLabel() string { return workloadv1alpha1.StateLabel(t.Key) }

// Finalizer is this target's syncer finalizer.
func (t Target) Finalizer() string { return workloadv1alpha1.SyncerFinalizer(t.Key) }

// State is the object's state for this target, and whether it is placed on it at all.
func (t Target) State(obj metav1.Object) (workloadv1alpha1.ResourceState, bool) {
	p, ok := workloadv1alpha1.PresenceOn(obj, t.Key)
	return p.State, ok
}

// ReportsStatus tells whether this target reports the hub object's status: the protocol
// names one reporter among the targets in Sync, the same for every syncer.
func (t Target) ReportsStatus(obj metav1.Object) bool {
	return workloadv1alpha1.StatusReporter(obj) == t.Key
}

// RemovalRequested tells whether the hub asks for the object to leave this target: it is
// being deleted, or its removal from the target was requested.
func (t Target) RemovalRequested(obj metav1.Object) bool {
	return obj.GetDeletionTimestamp() != nil || t.LeaveRequested(obj)
}

// LeaveRequested tells whether coordination asked for the object's removal from this
// target; unlike RemovalRequested, an object being deleted is not asked to leave by that.
func (t Target) LeaveRequested(obj metav1.Object) bool {
	_, requested := Annotation(obj, workloadv1alpha1.DeletionAnnotation(t.Key))
	return requested
}

// Held tells whether coordination finalizers for this target hold back the removal.
func (t Target) Held(obj metav1.Object) bool {
	p, _ := workloadv1alpha1.PresenceOn(obj, t.Key)
	return p.Held()
}
