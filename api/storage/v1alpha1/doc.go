// Package v1alpha1 holds the storage.custody.dev API: VolumeOwnership, the coordinator's
// durable, kubectl-visible record of one hub PersistentVolumeClaim.
//
// +kubebuilder:object:generate=true
// +groupName=storage.custody.dev
package v1alpha1
