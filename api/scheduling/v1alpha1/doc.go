// Package v1alpha1 holds the scheduling.custody.dev API: Locations, which group SyncTargets,
// and Placements, which bind namespaces to one Location.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.custody.dev
package v1alpha1
