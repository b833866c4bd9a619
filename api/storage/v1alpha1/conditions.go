package v1alpha1

// Annotations and finalizers the coordinator keeps on hub objects.
const (
	// VolumeFinalizer holds a hub claim until the coordinator has released its volume.
	VolumeFinalizer = "storage.custody.dev/volume"
	// HoldFinalizer is the coordination finalizer the coordinator lists in a claim's
	// finalizers.workload.custody.dev/<key> annotation while the claim must not leave <key>.
	HoldFinalizer = "storage.custody.dev/hold"
	// ReleaseOnAnnotation on a hub PV names the one target whose copy takes the hub PV's own
	// reclaim policy; every other copy is Retain.
	ReleaseOnAnnotation = "storage.custody.dev/release-on"
	// DomainAnnotation on a member's StorageClass names the storage domain the class's
	// volumes live in; a class without it provisions internal volumes.
	DomainAnnotation = "storage.custody.dev/domain"
)

// Reasons recorded on a VolumeOwnership and in its events.
const (
	ReasonWaitingForPlacement      = "WaitingForPlacement"
	ReasonNoProvisioningTarget     = "NoProvisioningTarget"
	ReasonProvisioning             = "Provisioning"
	ReasonBinding                  = "Binding"
	ReasonInUse                    = "InUse"
	ReasonWaitingForDetach         = "WaitingForDetach"
	ReasonNoTarget                 = "NoTarget"
	ReasonMoved                    = "Moved"
	ReasonInternalVolumeCannotMove = "InternalVolumeCannotMove"
	ReasonStorageClassMismatch     = "StorageClassMismatch"
	ReasonStorageClassMissing      = "StorageClassMissing"
	ReasonDomainUnreachable        = "DomainUnreachable"
	ReasonWaitingForSharers        = "WaitingForSharers"
	ReasonRestoringReclaim         = "RestoringReclaim"
	ReasonReleasing                = "Releasing"
	ReasonReleased                 = "Released"
	ReasonMultipleHolders          = "MultipleHolders"
)
