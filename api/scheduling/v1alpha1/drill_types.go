package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DrillLabel names the Drill that made an object: a sandbox namespace, the objects copied
// into it, and the Placement that binds them. A namespace so labelled is bound only by the
// Drill's own Placement, is no namespace of its LocationPair (it neither replicates nor
// fails over), and goes with the Drill.
const DrillLabel = "scheduling.custody.dev/drill"

// DrillFinalizer holds a Drill until everything it made is gone.
const DrillFinalizer = "scheduling.custody.dev/drill"

// DrillSpec names the LocationPair a Drill rehearses a failover of.
type DrillSpec struct {
	// Pair is the LocationPair whose latest replicas the drill restores at the Location the
	// pair does not run in.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="a Drill's pair cannot change: end the drill and start another"
	Pair string `json:"pair"`
}

// DrillPhase is where a Drill stands.
// +kubebuilder:validation:Enum=Pending;Restoring;Starting;Ready;Ending
type DrillPhase string

const (
	// DrillPending: the drill has not started: its pair is missing, has no active Location
	// yet, is switching, or is drilled by another Drill.
	DrillPending DrillPhase = "Pending"
	// DrillRestoring: the sandbox is made; its claims are being restored from the replicas.
	DrillRestoring DrillPhase = "Restoring"
	// DrillStarting: every claim is bound; the sandbox's workloads are starting.
	DrillStarting DrillPhase = "Starting"
	// DrillReady: every claim is bound and every workload of the sandbox is ready: the
	// failover the drill rehearses would have served.
	DrillReady DrillPhase = "Ready"
	// DrillEnding: the drill was ended; what it made is being removed.
	DrillEnding DrillPhase = "Ending"
)

// DrillNamespace is a namespace of the pair and the sandbox the drill copied it into.
type DrillNamespace struct {
	// Namespace is the pair's namespace, and Sandbox the drill's copy of it.
	Namespace string `json:"namespace"`
	Sandbox   string `json:"sandbox"`
}

// DrillStatus is what the drill did and measured.
type DrillStatus struct {
	// Phase is Pending, Restoring, Starting, Ready or Ending.
	// +optional
	Phase DrillPhase `json:"phase,omitempty"`
	// Location is where the drill runs: the Location its pair did not run in when it
	// started.
	// +optional
	Location string `json:"location,omitempty"`
	// StartTime is when the drill picked the replicas it restores.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// ReadyTime is when every claim of the sandbox was bound and every workload ready.
	// +optional
	ReadyTime *metav1.Time `json:"readyTime,omitempty"`
	// RecoveryTime is the drill's RTO: ReadyTime - StartTime.
	// +optional
	RecoveryTime *metav1.Duration `json:"recoveryTime,omitempty"`
	// OldestReplicaTime is the time of the oldest replica the drill restored, and DataWindow
	// StartTime less it: what a failover at the start would have lost at most.
	// +optional
	OldestReplicaTime *metav1.Time `json:"oldestReplicaTime,omitempty"`
	// +optional
	DataWindow *metav1.Duration `json:"dataWindow,omitempty"`
	// Steps are the phases the drill reached, in order, with their times.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Steps []PairStep `json:"steps,omitempty"`
	// Namespaces are the pair's namespaces and their sandboxes.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Namespaces []DrillNamespace `json:"namespaces,omitempty"`
	// Volumes counts the claims of the pair's namespaces the drill copied, Restored those
	// restored from a replica and bound, and Unprotected those it made empty, having no
	// replica at Location to restore them from (or being left out of the pair's protection).
	// +optional
	Volumes int32 `json:"volumes"`
	// +optional
	Restored int32 `json:"restored"`
	// +optional
	Unprotected int32 `json:"unprotected"`
	// Conditions: Ready (every claim of the sandbox bound and every workload ready; its
	// reason and message say what the drill waits for).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Drill rehearses a failover of a LocationPair without disturbing it: the latest replica of
// every protected volume of the pair is restored into sandbox namespaces of their own at the
// Location the pair does not run in, where copies of the pair's workloads start, their
// network isolated from everything outside their sandbox, while the pair keeps running and
// replicating at its active Location. Deleting the Drill ends it: the sandboxes go, with
// the volumes restored into them, and nothing else.
//
// Its name is at most 63 characters: it labels the sandboxes (DrillLabel).
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a Drill's name is at most 63 characters: it labels the drill's sandboxes"
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pair",type=string,JSONPath=`.spec.pair`
// +kubebuilder:printcolumn:name="Location",type=string,JSONPath=`.status.location`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="RTO",type=string,JSONPath=`.status.recoveryTime`
// +kubebuilder:printcolumn:name="Data-Window",type=string,JSONPath=`.status.dataWindow`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Drill struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   DrillSpec   `json:"spec"`
	Status DrillStatus `json:"status,omitempty"`
}

// DrillList is a list of Drills.
// +kubebuilder:object:root=true
type DrillList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Drill `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Drill{}, &DrillList{})
}
