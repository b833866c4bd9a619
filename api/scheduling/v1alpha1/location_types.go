package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocationSpec chooses the SyncTargets of a Location. The Location's own metadata labels are
// what Placements select on.
type LocationSpec struct {
	// InstanceSelector selects the SyncTargets of the Location by their labels. An empty
	// selector selects every target.
	InstanceSelector metav1.LabelSelector `json:"instanceSelector"`
}

// LocationStatus counts the Location's SyncTargets.
type LocationStatus struct {
	// Instances is the number of SyncTargets the selector matches.
	// +optional
	Instances int32 `json:"instances"`
	// AvailableInstances is the number of those that are Ready and not cordoned.
	// +optional
	AvailableInstances int32 `json:"availableInstances"`
	// Conditions: SelectorValid, StorageClassesCompatible.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the spec generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Location is a set of SyncTargets among which workloads move freely.
//
// Its name is a DNS label: LocationPairs, Placements and their status name it in fields of
// at most 63 characters, and a Location that no pair could name would be one no pair
// protects.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 63",message="a Location's name is a DNS label of at most 63 characters"
// +kubebuilder:resource:scope=Cluster,shortName=loc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Instances",type=integer,JSONPath=`.status.instances`
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableInstances`
// +kubebuilder:printcolumn:name="Labels",type=string,JSONPath=`.metadata.labels`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Location struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocationSpec   `json:"spec,omitempty"`
	Status LocationStatus `json:"status,omitempty"`
}

// LocationList is a list of Locations.
// +kubebuilder:object:root=true
type LocationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Location `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Location{}, &LocationList{})
}
