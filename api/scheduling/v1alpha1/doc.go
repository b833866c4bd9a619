// Package v1alpha1 holds the scheduling.custody.dev API: Locations, which group SyncTargets,
// Placements, which bind namespaces to one Location, and LocationPairs, which replicate one
// Location's volumes to another and switch between them. The steps of a pair's failover or
// relocate (PairAction.Progression) are named here, with the API, so that whoever reads a pair
// (the plugin, the tests) needs no package that decides them.
//
// +kubebuilder:object:generate=true
// +groupName=scheduling.custody.dev
package v1alpha1
