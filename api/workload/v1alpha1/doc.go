// Package v1alpha1 holds the workload.custody.dev API: SyncTarget, the hub's record of one
// member cluster, and the label and annotation protocol the controllers and syncers speak on
// hub objects.
//
// +kubebuilder:object:generate=true
// +groupName=workload.custody.dev
package v1alpha1
