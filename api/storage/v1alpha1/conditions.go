package v1alpha1

// Condition types of a VolumeOwnership and a Fence. A VolumeOwnership's reasons are the
// reasons below, the same as the record's own reason; a Fence's are its status.reason.
const (
	// ConditionReady is True while the volume is usable where its namespace runs: bound on
	// its owner (and sharers), nothing in the way. On a Fence: True while the storage is as
	// spec.state asks.
	ConditionReady = "Ready"
	// ConditionProgressing is True while provisioning, a move or a deletion is under way.
	ConditionProgressing = "Progressing"
	// ConditionReplicated is True while a LocationPair protects the volume and its latest
	// replica in the paired Location is from the last two intervals; False with the pair's
	// reason (NoReplica, ReplicationLagging, SyncFailed, StorageClassUnmapped) otherwise.
	// The dr controller writes it.
	ConditionReplicated = "Replicated"
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
	// ReasonWaitingForFence: the owner has been Unreachable past the fence delay and cannot
	// acknowledge the detach; the volume moves once a Fence cuts the owner off the storage.
	ReasonWaitingForFence = "WaitingForFence"
	// ReasonOwnerFenced: a Fence cut the lost owner off the storage; coordination
	// acknowledges the detach in its place and the volume moves.
	ReasonOwnerFenced = "OwnerFenced"
	// ReasonOwnerLostNoFencing: the owner is lost and its SyncTarget has no spec.fencing, so
	// the storage cannot cut it off; an admin who knows the member is powered off says so
	// with a Manual Fence.
	ReasonOwnerLostNoFencing = "OwnerLostNoFencing"
	// ReasonMassFailure: the owner is lost, and more of the hub's targets are Unreachable at
	// once than the controller's brake allows (--mass-failure-share): no Fence is asked for, as a
	// split of the hub's network looks the same. A Fence an admin asks for still goes ahead.
	ReasonMassFailure = "MassFailure"
	// ReasonFencingUnverified: the owner is lost, and its SyncTarget's node CIDRs do not match
	// the clients its storage reports of it (its FencingVerified condition is False): a
	// NetworkFence of them could miss a client, so none is asked for. An admin corrects the
	// target's spec.fencing, or fences the member by hand (a Manual Fence), and the volume
	// moves.
	ReasonFencingUnverified = "FencingUnverified"
	// ReasonFenceFailed: the Fence of the lost owner failed; it is retried and nothing moves
	// meanwhile.
	ReasonFenceFailed = "FenceFailed"
	// ReasonNoTarget: the volume let go of its old owner and no target can take it yet.
	ReasonNoTarget = "NoTarget"
	// ReasonMoved: the volume was given to a new owner; the record keeps it while that owner
	// holds the volume, as it would InUse.
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
	// ReasonWaitingForFencedTarget: the claim was deleted while a target the volume was
	// fenced away from still has its copy in its member; the storage is released once that
	// target returned and removed it and its Fence is lifted, or once its SyncTarget is gone.
	ReasonWaitingForFencedTarget = "WaitingForFencedTarget"
	// ReasonReleasing: the owner lets the claim go with the volume's own reclaim policy.
	ReasonReleasing = "Releasing"
	// ReasonReleased: no target holds the volume any more.
	ReasonReleased = "Released"
	// ReasonRetained: the claim was deleted and its owner let it go with reclaim policy
	// Retain; the hub PV stays, Released, and keeps the storage for an admin.
	ReasonRetained = "Retained"
	// ReasonRetainedWithoutOwner: the claim was deleted while no target had a copy of it to
	// release the storage through; the hub PV stays, Released, and keeps the storage for an
	// admin.
	ReasonRetainedWithoutOwner = "RetainedWithoutOwner"
	// ReasonMultipleHolders: more than one target holds an owned volume; nothing moves until
	// all but one let go.
	ReasonMultipleHolders = "MultipleHolders"
	// ReasonSettingAside: a failover or relocate restores the claim from a replica; the
	// volume it replaces is being let go of, or its hub PV deleted. Its storage is kept.
	ReasonSettingAside = "SettingAside"
	// ReasonRestoring: the replica's target provisions the claim's new volume from the replica.
	ReasonRestoring = "Restoring"
	// ReasonNoReplica: a failover found no replica of the volume. The claim is not restored
	// empty; it waits, and its data stays where it was.
	ReasonNoReplica = "NoReplica"
	// ReasonNotProtected: a switch of Locations left the claim, which its label
	// storage.custody.dev/protect=false keeps out of its pair's protection: it waits, and its
	// data stays where it was.
	ReasonNotProtected = "NotProtected"
	// ReasonReplicaMissing: the replica a claim is restored from is not in the member of its
	// target (deleted there); the claim's copy is not made until it is, and is retried. An
	// event on the claim.
	ReasonReplicaMissing = "ReplicaMissing"
)

// Reasons of the events about the claims of a StatefulSet, on the StatefulSet or the claim.
const (
	// ReasonClaimCreated: a claim of the set's volumeClaimTemplates was made on the hub.
	ReasonClaimCreated = "ClaimCreated"
	// ReasonClaimRefused: the hub refused a claim of the set's volumeClaimTemplates, for
	// instance because its name is not valid; the event carries the API server's answer.
	ReasonClaimRefused = "ClaimRefused"
	// ReasonClaimDeleted: the set scaled down with whenScaled Delete, and the claim of an
	// ordinal it no longer has was deleted.
	ReasonClaimDeleted = "ClaimDeleted"
	// ReasonClaimAdopted: a member made a claim itself, and its syncer adopted it: the
	// member's volume is the claim's, coordinated like any other.
	ReasonClaimAdopted = "ClaimAdopted"
	// ReasonClaimNotAdopted: a member made a claim itself that cannot be adopted, as the hub
	// claim's volume is another one; the member's claim and its volume stay as they are.
	ReasonClaimNotAdopted = "ClaimNotAdopted"
)
