package coordination

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// Presence is an object's standing on one target, as its state label and annotations say.
// An object has a Presence for a target only while it carries the target's state label.
type Presence struct {
	State workloadv1alpha1.ResourceState
	// Leaving: the object's removal from the target was requested.
	Leaving bool
	// Held: the claim lists the coordinator's hold for the target.
	Held bool
	// Downstream: the target's syncer finalizer is on the object: its syncer made the copy
	// in the member, and has not yet removed it.
	Downstream bool
}

// Synced tells whether the target's syncer works on the object (Sync or Upsync).
func (p Presence) Synced() bool { return p.State != workloadv1alpha1.ResourceStatePending }

// Claim is the hub PersistentVolumeClaim.
type Claim struct {
	AccessModes []corev1.PersistentVolumeAccessMode
	VolumeName  string
	Deleting    bool
	// ReleasePolicy is the policy the claim carries for its last target's copy, if set.
	ReleasePolicy corev1.PersistentVolumeReclaimPolicy
	// StorageClassName is the class the claim names; nil asks for the default class.
	StorageClassName *string
	On               map[string]Presence
	// Restore is the replica a failover or relocate asks to restore the claim from; nil
	// when none is asked for.
	Restore *Restore
	// Unprotected: the claim is labelled out of its pair's protection
	// (storagev1alpha1.ProtectLabel); a switch of Locations leaves it where it is.
	Unprotected bool
}

// Restore is a claim's restore-from annotation: the target whose member holds the replica,
// and the VolumeSnapshot; an empty Snapshot says the switch found no replica.
type Restore struct {
	Target, Snapshot string
}

// Is tells whether the replica is the one the restore names.
func (r Restore) Is(replica *storagev1alpha1.Replica) bool {
	return replica != nil && replica.Target == r.Target && replica.Snapshot == r.Snapshot
}

// Volume is the hub PersistentVolume of the claim.
type Volume struct {
	Name string
	// BoundToClaim: its claimRef names the claim.
	BoundToClaim bool
	// ReclaimPolicy is the hub PV's own policy: what the volume's owner applies when the
	// claim is deleted.
	ReclaimPolicy corev1.PersistentVolumeReclaimPolicy
	Deleting      bool
	// Released: its status phase is Released, as RetainVolume leaves it.
	Released bool
	// Pending: its status phase is Pending, as an API server makes every PV: the syncer that
	// upsynced it has not reported its member's PV's status yet.
	Pending bool
	// Driver and Handle name its CSI storage; empty for any other volume source.
	Driver, Handle string
	On             map[string]Presence
}

// Target is what coordination knows of one SyncTarget.
type Target struct {
	// Name is the SyncTarget's name, which its Fences name.
	Name  string
	Ready bool
	// UnreachableSince is when the target stopped answering; zero while it answers.
	UnreachableSince time.Time
	// CanFence: the target says how a NetworkFence cuts it off its storage.
	CanFence bool
	// FencingUnverified says why a NetworkFence of the target's node CIDRs could miss a client
	// its storage reports of it, or fence addresses the storage does not know
	// (fencing.Unverified); "" when they match, or nothing was reported. No Fence is asked
	// for such a target on coordination's own.
	FencingUnverified string
	// FenceDelay is how long the target must be Unreachable before it is lost and its owned
	// volumes wait for a Fence of it.
	FenceDelay time.Duration
	// Fences is where a Fence of the target stands, per storage domain; a domain without
	// one is Unfenced.
	Fences  map[string]fencing.State
	Domains []string
	// Class is the claim's StorageClass as the target reports it; nil when it has none.
	Class *workloadv1alpha1.StorageClassInfo
}

// Record is what the VolumeOwnership says of the decisions so far.
type Record struct {
	Owner           string
	Phase           storagev1alpha1.VolumePhase
	Reason          string
	OriginalReclaim corev1.PersistentVolumeReclaimPolicy
	// FencedOff are the targets a Fence took the volume from, while the Fence holds.
	FencedOff []string
	// Replica is the latest replica the dr controller recorded; RestoredFrom the one the
	// volume was last restored from; SetAside the volume that restore replaced.
	Replica, RestoredFrom *storagev1alpha1.Replica
	SetAside              *storagev1alpha1.SetAsideVolume
}

// CompatibleFunc tells whether a volume of one StorageClass may move to a target reporting
// the other, and why not.
type CompatibleFunc func(from, to *workloadv1alpha1.StorageClassInfo) (bool, string)

// Observation is everything Decide reads about one volume.
type Observation struct {
	Claim   Claim
	Volume  *Volume
	Targets map[string]Target
	Record  Record
	// Compatible checks owned moves; nil allows every move to a target with the class.
	Compatible CompatibleFunc
	// Now is the time of the observation.
	Now time.Time
	// Brake holds back the Fence of a lost owner while many targets are lost at once.
	Brake fencing.Brake
}

// ActionKind names one write of the coordinator.
type ActionKind string

const (
	// SyncClaim sets the claim's state label for the target to Sync.
	SyncClaim ActionKind = "SyncClaim"
	// DropClaim removes the claim's empty state label and deletion annotation for a target
	// the claim leaves before it was ever synced there: no syncer has anything to remove.
	DropClaim ActionKind = "DropClaim"
	// SyncVolume sets the hub PV's state label for the target to Sync (switching an Upsync,
	// or adding the target) and clears a deletion annotation left from an earlier removal.
	SyncVolume ActionKind = "SyncVolume"
	// Hold lists the coordinator's hold for the target on the claim.
	Hold ActionKind = "Hold"
	// Unhold drops it.
	Unhold ActionKind = "Unhold"
	// RemoveVolume requests the hub PV's removal from the target.
	RemoveVolume ActionKind = "RemoveVolume"
	// BindClaim binds the hub claim and the hub PV to each other, setting the hub PV's
	// reclaim policy to Policy if one is given.
	BindClaim ActionKind = "BindClaim"
	// SetReleasePolicy sets the policy the claim's last target applies to its copy of the
	// volume when the claim leaves it (Policy).
	SetReleasePolicy ActionKind = "SetReleasePolicy"
	// DeleteVolume deletes the hub PV, which no target holds any more, and drops the
	// protection finalizer a hub API server put on it.
	DeleteVolume ActionKind = "DeleteVolume"
	// RetainVolume keeps the hub PV, which no target holds any more, as the record of the
	// storage a deleted claim left behind: status phase Released, its claimRef kept, the
	// target that held it last (Target) and the storage domain in annotations, and the
	// protection finalizer dropped so that an admin's delete goes through. Deleting it then
	// releases nothing, as no target holds it.
	RetainVolume ActionKind = "RetainVolume"
	// Finish drops the coordinator's finalizer from the deleted claim.
	Finish ActionKind = "Finish"
	// ReleaseFenced drops the target's state labels, removal requests and syncer finalizers
	// from the claim and the PV: a Fence cut the target off the storage, so coordination
	// acknowledges the detach in its place.
	ReleaseFenced ActionKind = "ReleaseFenced"
	// RequestFence asks for a Network Fence of the target in the volume's storage domain.
	RequestFence ActionKind = "RequestFence"
	// DropTarget drops the target's state labels, removal requests, hold and syncer
	// finalizers from the claim and the PV without its acknowledgement: the claim is
	// restored elsewhere from a replica, and the target, which does not answer, keeps its
	// copies of the volume set aside until its syncer returns and removes them.
	DropTarget ActionKind = "DropTarget"
)

// Action is one write, on the object its kind names.
type Action struct {
	Kind   ActionKind
	Target string
	Policy corev1.PersistentVolumeReclaimPolicy
}

// Decision is the next step for one volume: the record to write, then the actions.
type Decision struct {
	Class   storagev1alpha1.VolumeClass
	Domain  string
	Phase   storagev1alpha1.VolumePhase
	Owner   string
	Sharers []string
	// FencedOff are the targets a Fence took the volume from whose Fence still holds: their
	// members keep copies until they return, and the storage is not released before.
	FencedOff []string
	// RestoredFrom and SetAside carry the record's on, as a restore changes them.
	RestoredFrom *storagev1alpha1.Replica
	SetAside     *storagev1alpha1.SetAsideVolume
	Reclaim      storagev1alpha1.ReclaimStatus
	Reason       string
	Message      string
	Actions      []Action
	// Recheck, when not zero, is when the decision may change with time alone: an
	// unreachable owner is lost once the fence delay has passed.
	Recheck time.Duration
}

// Provisions tells whether the decision gives a claim that has no hub PV to a target to
// provision: the one step that must not be taken on a stale view, as a PV upsynced meanwhile
// would be provisioned a second time.
func (d Decision) Provisions() bool {
	return (d.Phase == storagev1alpha1.Provisioning || d.Phase == storagev1alpha1.Restoring) && slices.ContainsFunc(d.Actions, func(a Action) bool { return a.Kind == SyncClaim })
}
