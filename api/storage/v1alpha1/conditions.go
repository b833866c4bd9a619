package v1alpha1

// Annotations and finalizers the coordinator keeps on hub objects.
const (
	// VolumeFinalizer holds a hub claim until the coordinator has released its volume.
	VolumeFinalizer = "storage.custody.dev/volume"
	// HoldFinalizer is the coordination finalizer the coordinator lists in a claim's
	// finalizers.workload.custody.dev/<key> annotation while the claim must not leave <key>.
	HoldFinalizer = "storage.custody.dev/hold"
	// ReleasePolicyAnnotation on a deleted hub claim is the reclaim policy its last target
	// applies to its copy of the volume just before it lets the claim go. Without it, and
	// on every claim that still lives, a syncer makes the copy Retain first.
	ReleasePolicyAnnotation = "storage.custody.dev/release-policy"
	// DomainAnnotation on a member's StorageClass names the storage domain the class's
	// volumes live in; a class without it provisions internal volumes.
	DomainAnnotation = "storage.custody.dev/domain"
)

// Reasons recorded on a VolumeOwnership and in its events.
const (
	// ReasonWaitingForPlacement: the claim's namespace is on no target.
	ReasonWaitingForPlacement = "WaitingForPlacement"
	// ReasonNoProvisioningTarget: no Ready target of the claim reaches its StorageClass.
	ReasonNoProvisioningTarget = "NoProvisioningTarget"
	// ReasonProvisioning: one target's storage provisions the volume.
	ReasonProvisioning = "Provisioning"
	// ReasonBinding: the provisioned PV came up; the hub claim and PV are being bound.
	ReasonBinding = "Binding"
	// ReasonInUse: the volume is on its owner (and sharers).
	ReasonInUse = "InUse"
	// ReasonWaitingForDetach: the old owner must let go of the volume before it moves.
	ReasonWaitingForDetach = "WaitingForDetach"
	// ReasonNoTarget: the volume let go of its old owner and no target can take it yet.
	ReasonNoTarget = "NoTarget"
	// ReasonMoved: the volume was given to a new owner.
	ReasonMoved = "Moved"
	// ReasonInternalVolumeCannotMove: the volume lives inside one member and moves only by
	// copying; it stays.
	ReasonInternalVolumeCannotMove = "InternalVolumeCannotMove"
	// ReasonStorageClassMismatch: the target the volume would move to has a different
	// StorageClass of the same name; the move is refused.
	ReasonStorageClassMismatch = "StorageClassMismatch"
	// ReasonStorageClassMissing: the target has no StorageClass of the claim.
	ReasonStorageClassMissing = "StorageClassMissing"
	// ReasonDomainUnreachable: the target does not reach the volume's storage domain.
	ReasonDomainUnreachable = "DomainUnreachable"
	// ReasonWaitingForSharers: the claim was deleted; the other targets leave first.
	ReasonWaitingForSharers = "WaitingForSharers"
	// ReasonReleasing: the owner lets the claim go with the volume's own reclaim policy.
	ReasonReleasing = "Releasing"
	// ReasonReleased: no target holds the volume any more.
	ReasonReleased = "Released"
	// ReasonRetainedWithoutOwner: the claim was deleted while no target held the volume; the
	// hub PV stays and keeps the storage for an admin.
	ReasonRetainedWithoutOwner = "RetainedWithoutOwner"
	// ReasonMultipleHolders: more than one target holds an owned volume; nothing moves until
	// all but one let go.
	ReasonMultipleHolders = "MultipleHolders"
)
