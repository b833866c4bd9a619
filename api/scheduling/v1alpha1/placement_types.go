package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PlacementSpec chooses one Location and the namespaces to bind to it.
// +kubebuilder:validation:XValidation:rule="has(self.locationSelectors) || has(self.locationName)",message="set locationSelectors, locationName, or both"
type PlacementSpec struct {
	// LocationSelectors select Locations by their labels; a Location matching any of them is
	// a candidate.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	LocationSelectors []metav1.LabelSelector `json:"locationSelectors,omitempty"`

	// LocationName restricts the choice to the Location of that name.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	LocationName string `json:"locationName,omitempty"`

	// NamespaceSelector selects the namespaces to bind. An empty selector selects every
	// namespace.
	NamespaceSelector metav1.LabelSelector `json:"namespaceSelector"`

	// TargetNames, when set, limits the targets of the Location to these SyncTargets. A
	// restricted SyncTarget is used only by Placements that name it here.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=56
	TargetNames []string `json:"targetNames,omitempty"`
}

// PlacementPhase is where a Placement stands.
// +kubebuilder:validation:Enum=Pending;Unbound;Bound
type PlacementPhase string

const (
	// PlacementPending: no valid Location is selected yet.
	PlacementPending PlacementPhase = "Pending"
	// PlacementUnbound: a Location is selected, but no namespace is bound.
	PlacementUnbound PlacementPhase = "Unbound"
	// PlacementBound: a Location is selected and at least one namespace is bound to it.
	PlacementBound PlacementPhase = "Bound"
)

// PlacementStatus is the Placement's outcome.
type PlacementStatus struct {
	// Phase is Pending, Unbound or Bound.
	// +optional
	Phase PlacementPhase `json:"phase,omitempty"`
	// SelectedLocation is the Location chosen.
	// +optional
	SelectedLocation string `json:"selectedLocation,omitempty"`
	// Conditions: Ready is True while the selected Location exists and matches the spec.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the spec generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// Placement binds the namespaces its selector matches to one Location.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=pl
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Location",type=string,JSONPath=`.status.selectedLocation`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Placement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   PlacementSpec   `json:"spec,omitempty"`
	Status PlacementStatus `json:"status,omitempty"`
}

// PlacementList is a list of Placements.
// +kubebuilder:object:root=true
type PlacementList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Placement `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Placement{}, &PlacementList{})
}
