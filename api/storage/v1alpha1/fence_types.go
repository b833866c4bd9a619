package v1alpha1

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FenceState is the state a Fence asks for.
// +kubebuilder:validation:Enum=Fenced;Unfenced
type FenceState string

const (
	// Fenced: the target must be cut off the storage domain.
	Fenced FenceState = "Fenced"
	// Unfenced: the target may reach the storage domain again.
	Unfenced FenceState = "Unfenced"
)

// FenceMode is how the storage cuts the target off.
// +kubebuilder:validation:Enum=Network;Manual
type FenceMode string

const (
	// Network: a csi-addons NetworkFence, created by the syncer of a Ready target of the same
	// domain, fences the target's node CIDRs (its SyncTarget's spec.fencing).
	Network FenceMode = "Network"
	// Manual: an admin states that the member is powered off and cannot reach the storage,
	// as Kubernetes' out-of-service taint does for a node. Nothing is executed.
	Manual FenceMode = "Manual"
)

// FencePhase is where a Fence stands.
// +kubebuilder:validation:Enum=Pending;Fencing;Fenced;Unfencing;Unfenced;Failed
type FencePhase string

const (
	// FencePending: no executor could be chosen yet.
	FencePending FencePhase = "Pending"
	// FenceFencing: the executor's member is fencing the target.
	FenceFencing FencePhase = "Fencing"
	// FenceFenced: the storage confirmed that the target is cut off.
	FenceFenced FencePhase = "Fenced"
	// FenceUnfencing: the target came back, reported clean, and is being unfenced; also a
	// Fence lifted while the storage still executed the fence, which waits for the storage's
	// answer before it unfences.
	FenceUnfencing FencePhase = "Unfencing"
	// FenceUnfenced: the storage confirmed that the target may reach it again.
	FenceUnfenced FencePhase = "Unfenced"
	// FenceFailed: the storage refused or failed the operation; it is retried.
	FenceFailed FencePhase = "Failed"
)

// FenceFinalizer holds a Fence until its target is unfenced: deleting a Fence that still
// fences unfences first.
const FenceFinalizer = "storage.custody.dev/fence"

// FenceSpec says which target to cut off which storage domain, and how.
type FenceSpec struct {
	// TargetName is the SyncTarget to fence: a DNS label of at most 56 characters, as every
	// SyncTarget's name is, so that the Fence's name and its NetworkFence's
	// (custody-<name>) fit.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=56
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the target of a Fence cannot change"
	TargetName string `json:"targetName"`

	// Domain is the storage domain the target is cut off.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the domain of a Fence cannot change"
	Domain string `json:"domain"`

	// State is Fenced while the target must stay cut off, Unfenced once it may come back.
	// +kubebuilder:default=Fenced
	// +optional
	State FenceState `json:"state,omitempty"`

	// Mode is Network (a csi-addons NetworkFence) or Manual (the admin states the member is
	// powered off).
	// +kubebuilder:default=Network
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the mode of a Fence cannot change"
	Mode FenceMode `json:"mode,omitempty"`

	// HeldBy names who keeps the target fenced while it answers, as "locationpair/NAME": a
	// LocationPair's failover fences the Location it leaves, also where its targets still
	// answer. A Fence with no holder is lifted once its target is back and clean; a held one
	// only once its holder let go (cleared the field) or no longer exists, on a clean report
	// made since.
	// +kubebuilder:validation:MaxLength=76
	// +kubebuilder:validation:XValidation:rule="self.startsWith('locationpair/') && size(self) > 13",message="heldBy names a LocationPair, as locationpair/NAME"
	// +optional
	HeldBy string `json:"heldBy,omitempty"`
}

// NetworkFenceStatus is what the executor's NetworkFence reported.
type NetworkFenceStatus struct {
	// ClassName is the NetworkFenceClass the executor fences with, from the target's
	// spec.fencing.
	// +optional
	ClassName string `json:"className,omitempty"`
	// CIDRs are the fenced target's node CIDRs, from its spec.fencing.
	// +optional
	// +listType=atomic
	CIDRs []string `json:"cidrs,omitempty"`
	// ReportedBy is the executor that reported FenceState, Result and Message.
	// +optional
	ReportedBy string `json:"reportedBy,omitempty"`
	// FenceState is the state the NetworkFence was last seen executing.
	// +optional
	FenceState FenceState `json:"fenceState,omitempty"`
	// Result is the NetworkFence's status.result: Succeeded or Failed.
	// +optional
	Result string `json:"result,omitempty"`
	// Message is the NetworkFence's status.message.
	// +optional
	Message string `json:"message,omitempty"`
}

// FenceStatus is where the Fence stands, with the times of each step.
type FenceStatus struct {
	// Phase is Pending, Fencing, Fenced, Unfencing, Unfenced or Failed.
	// +optional
	Phase FencePhase `json:"phase,omitempty"`
	// Executor is the SyncTarget whose member executes the NetworkFence.
	// +optional
	Executor string `json:"executor,omitempty"`
	// NetworkFence is what the executor's NetworkFence was asked and answered.
	// +optional
	NetworkFence *NetworkFenceStatus `json:"networkFence,omitempty"`
	// Reason and Message explain the phase.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
	// RequestedTime is when fencing started.
	// +optional
	RequestedTime *metav1.Time `json:"requestedTime,omitempty"`
	// FencedTime is when the storage confirmed the fence.
	// +optional
	FencedTime *metav1.Time `json:"fencedTime,omitempty"`
	// UnfenceRequestedTime is when the controller first saw the spec ask for the unfence. The
	// target is unfenced only on a report that it is clean made after it: until coordination
	// saw the request, it could still take volumes from the target that an older report
	// counted as the target's own.
	// +optional
	UnfenceRequestedTime *metav1.Time `json:"unfenceRequestedTime,omitempty"`
	// UnfencingTime is when unfencing started.
	// +optional
	UnfencingTime *metav1.Time `json:"unfencingTime,omitempty"`
	// UnfencedTime is when the storage confirmed the unfence.
	// +optional
	UnfencedTime *metav1.Time `json:"unfencedTime,omitempty"`
	// Conditions: Ready is True while the phase is the one the spec asks for.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Fence cuts one lost target off one storage domain, for every volume of it there. Its name
// is <targetName>.<domain>, so there is one per target and domain.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="self.metadata.name == self.spec.targetName + '.' + self.spec.domain",message="a Fence is named <targetName>.<domain>"
// +kubebuilder:printcolumn:name="Target",type=string,JSONPath=`.spec.targetName`
// +kubebuilder:printcolumn:name="Domain",type=string,JSONPath=`.spec.domain`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.spec.state`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Executor",type=string,JSONPath=`.status.executor`
// +kubebuilder:printcolumn:name="Fenced",type=date,JSONPath=`.status.fencedTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Fence struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FenceSpec   `json:"spec"`
	Status FenceStatus `json:"status,omitempty"`
}

// FenceList is a list of Fences.
// +kubebuilder:object:root=true
type FenceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Fence `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Fence{}, &FenceList{})
}

// FenceName is the name of the Fence of a target in a domain.
func FenceName(target, domain string) string { return target + "." + domain }

// pairHolderPrefix starts the HeldBy of a Fence that a LocationPair holds.
const pairHolderPrefix = "locationpair/"

// PairHolder is the HeldBy of a Fence that the LocationPair named holds.
func PairHolder(pair string) string { return pairHolderPrefix + pair }

// HolderPair is the LocationPair that holds the Fence, "" when none does.
func (f *Fence) HolderPair() string {
	pair, _ := strings.CutPrefix(f.Spec.HeldBy, pairHolderPrefix)
	return pair
}

// Lifting tells whether the Fence is being lifted: asked to unfence, or deleted. It then no
// longer lets a volume leave its target, and no new Fence can be asked for until it is gone.
func (f *Fence) Lifting() bool {
	return f.Spec.State == Unfenced || !f.DeletionTimestamp.IsZero()
}

// Holds tells whether the Fence cuts its target off the domain now, as the storage
// confirmed: from Fenced until Unfenced. An Unfencing or Failed Fence holds only if the
// storage had confirmed the fence before (its fencedTime): a lift asked while the fence was
// still executing is Unfencing too, and holds nothing the storage confirmed.
func (f *Fence) Holds() bool {
	switch f.Status.Phase {
	case FenceFenced:
		return true
	case FenceUnfencing, FenceFailed:
		return f.Status.FencedTime != nil && f.Status.UnfencedTime == nil
	}
	return false
}
