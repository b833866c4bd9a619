package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// VolumeClass says how a volume may be used across targets.
// +kubebuilder:validation:Enum=Shared;Owned;Internal
type VolumeClass string

const (
	// Shared: ReadWriteMany or ReadOnlyMany on network storage; many targets at once.
	Shared VolumeClass = "Shared"
	// Owned: ReadWriteOnce or ReadWriteOncePod on network storage; one target at a time,
	// moving only after the old owner let go of it or was fenced off.
	Owned VolumeClass = "Owned"
	// Internal: storage inside one member; it moves only by copying.
	Internal VolumeClass = "Internal"
)

// VolumePhase is where a volume stands in its life.
// +kubebuilder:validation:Enum=Pending;Provisioning;Restoring;Upsyncing;Bound;Moving;Deleting;Released
type VolumePhase string

const (
	// Pending: the claim is placed but no target may provision it yet.
	Pending VolumePhase = "Pending"
	// Provisioning: the claim is synced to one target, whose storage provisions the volume.
	Provisioning VolumePhase = "Provisioning"
	// Restoring: a failover or relocate restores the claim from a replica in the other
	// Location of a LocationPair: the volume it replaces is set aside, and the replica's
	// target provisions a new one from the replica.
	Restoring VolumePhase = "Restoring"
	// Upsyncing: the provisioned PV came up to the hub and is being bound and shared.
	Upsyncing VolumePhase = "Upsyncing"
	// Bound: the volume is in use on its owner (and sharers).
	Bound VolumePhase = "Bound"
	// Moving: an owned volume is leaving its owner; the new owner gets it once the old one
	// acknowledged the detach.
	Moving VolumePhase = "Moving"
	// Deleting: the claim was deleted; sharers are removed, then the owner releases the
	// storage.
	Deleting VolumePhase = "Deleting"
	// Released: the storage was handed back for release and the hub PV is gone.
	Released VolumePhase = "Released"
)

// ReclaimStatus records the reclaim policies of a volume.
type ReclaimStatus struct {
	// Original is the policy the volume was provisioned with, or the hub PV's policy; it
	// applies on the owner when the claim is deleted.
	// +optional
	Original corev1.PersistentVolumeReclaimPolicy `json:"original,omitempty"`
	// Current is the policy of the downstream copies now: Retain while the volume lives.
	// +optional
	Current corev1.PersistentVolumeReclaimPolicy `json:"current,omitempty"`
}

// Transition is one change of phase, with why it happened.
type Transition struct {
	Phase VolumePhase `json:"phase"`
	Time  metav1.Time `json:"time"`
	// +optional
	Owner string `json:"owner,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// SetAsideVolume is a volume that a restore from a replica replaced. Its storage is never
// released by Custody: it may hold writes newer than the replica. The member that held it
// last keeps its copy, Retain, until its syncer returns and removes it; the storage stays,
// for an admin to recover from or release.
type SetAsideVolume struct {
	// Driver and VolumeHandle name the storage, as the CSI driver knows it.
	// +optional
	Driver string `json:"driver,omitempty"`
	// +optional
	VolumeHandle string `json:"volumeHandle,omitempty"`
	// Domain is the storage domain it lives in.
	// +optional
	Domain string `json:"domain,omitempty"`
	// Target is the key of the target that held it last.
	// +optional
	Target string `json:"target,omitempty"`
	// For is the replica restored in its place.
	For Replica `json:"for"`
	// Time is when it was set aside.
	Time metav1.Time `json:"time"`
	// ReclaimPolicy is the reclaim policy of its hub PV. Retain carries over to the hub PV
	// of the volume restored in its place: a claim whose storage is kept stays so.
	// +optional
	ReclaimPolicy corev1.PersistentVolumeReclaimPolicy `json:"reclaimPolicy,omitempty"`
}

// VolumeOwnershipStatus is the coordinator's record of one volume.
type VolumeOwnershipStatus struct {
	// Class is Shared, Owned or Internal.
	// +optional
	Class VolumeClass `json:"class,omitempty"`
	// StorageClassName is the StorageClass of the claim's volume where it runs: the one it
	// names, or the one its LocationPair maps that to.
	// +optional
	StorageClassName string `json:"storageClassName,omitempty"`
	// Domain is the storage domain the volume lives in; empty for an internal volume.
	// +optional
	Domain string `json:"domain,omitempty"`
	// VolumeName is the hub PV bound to the claim.
	// +optional
	VolumeName string `json:"volumeName,omitempty"`
	// Owner is the key of the target that owns (or provisions) the volume or, while no
	// target holds it, the one that held it last.
	// +optional
	Owner string `json:"owner,omitempty"`
	// Sharers are the keys of the other targets that use a shared volume.
	// +optional
	// +listType=set
	Sharers []string `json:"sharers,omitempty"`
	// Phase is where the volume stands.
	// +optional
	Phase VolumePhase `json:"phase,omitempty"`
	// PhaseSince is when the volume entered the phase.
	// +optional
	PhaseSince *metav1.Time `json:"phaseSince,omitempty"`
	// FencedOff are the keys of the targets a Fence took the volume from, while that Fence
	// holds: each keeps a copy of the claim and the PV in its member until it returns and
	// removes them, and the storage is not released before then.
	// +optional
	// +listType=set
	FencedOff []string `json:"fencedOff,omitempty"`
	// Replica is the volume's latest replica in the paired Location, while its namespace
	// runs in a LocationPair's active Location.
	// +optional
	Replica *Replica `json:"replica,omitempty"`
	// RestoredFrom is the replica the volume was restored from by the last failover or
	// relocate.
	// +optional
	RestoredFrom *Replica `json:"restoredFrom,omitempty"`
	// SetAside is the volume the last restore replaced: its storage was kept, and no hub PV
	// names it any more.
	// +optional
	SetAside *SetAsideVolume `json:"setAside,omitempty"`
	// EarlierSetAside are the volumes that restores before the last one replaced, oldest
	// first: their storage was kept too, and only this record tells where it is.
	// +optional
	EarlierSetAside []SetAsideVolume `json:"earlierSetAside,omitempty"`
	// Reclaim records the original and the current reclaim policy.
	// +optional
	Reclaim ReclaimStatus `json:"reclaim,omitempty"`
	// Reason is why the volume is where it stands, as one CamelCase word.
	// +optional
	Reason string `json:"reason,omitempty"`
	// Message says it for a person.
	// +optional
	Message string `json:"message,omitempty"`
	// Conditions: Ready (the volume is usable where its namespace runs) and Progressing
	// (provisioning, a move or a deletion is under way).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Transitions are the phase changes so far, the oldest first; the oldest are dropped
	// past 32.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Transitions []Transition `json:"transitions,omitempty"`
}

// VolumeOwnership records who holds one hub PersistentVolumeClaim's volume and what it is
// doing. It has the claim's name and namespace and goes with the claim.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vo
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Class",type=string,JSONPath=`.status.class`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Owner",type=string,JSONPath=`.status.owner`
// +kubebuilder:printcolumn:name="Sharers",type=string,JSONPath=`.status.sharers`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Since",type=date,JSONPath=`.status.phaseSince`
// +kubebuilder:printcolumn:name="Reclaim",type=string,JSONPath=`.status.reclaim.current`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.reason`
// +kubebuilder:printcolumn:name="Volume",type=string,JSONPath=`.status.volumeName`,priority=1
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.status.domain`,priority=1
type VolumeOwnership struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Status VolumeOwnershipStatus `json:"status,omitempty"`
}

// VolumeOwnershipList is a list of VolumeOwnerships.
// +kubebuilder:object:root=true
type VolumeOwnershipList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeOwnership `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VolumeOwnership{}, &VolumeOwnershipList{})
}

// Settled tells whether the volume is Bound and held where it was given: in use there, or
// moved there.
func (s *VolumeOwnershipStatus) Settled() bool {
	return s.Phase == Bound && (s.Reason == ReasonInUse || s.Reason == ReasonMoved)
}
