// Package v1alpha1 holds the storage.custody.dev API: VolumeOwnership, the coordinator's
// durable, kubectl-visible record of one hub PersistentVolumeClaim, and Fence, which cuts a
// lost target off a storage domain so that its owned volumes may move without it.
//
// +kubebuilder:object:generate=true
// +groupName=storage.custody.dev
package v1alpha1
