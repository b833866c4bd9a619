package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SyncTargetSpec describes a member cluster and how Custody may use it. The target's own
// metadata labels are what Location instance selectors match.
type SyncTargetSpec struct {
	// StorageDomains are the storage systems the member reaches. A network volume moves only
	// between targets that share its domain.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:items:MaxLength=63
	StorageDomains []string `json:"storageDomains,omitempty"`

	// Unschedulable cordons the target: no namespace is placed on it, and the namespaces on it
	// move to another eligible target of their Location. A namespace with nowhere else to go
	// stays, so that cordoning never takes a workload down.
	// +optional
	Unschedulable bool `json:"unschedulable,omitempty"`

	// Evict removes every namespace from the target, whether or not another target can take
	// it, as a member that is not Ready or is deleted would.
	// +optional
	Evict bool `json:"evict,omitempty"`

	// NodeSelector is merged into the node selector of every pod template synced to the
	// member. The user's own keys win.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are added to every pod template synced to the member.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Fencing tells how to cut the member off its storage when it is lost.
	// +optional
	Fencing *FencingSpec `json:"fencing,omitempty"`

	// FenceDelay is how long the target may be Unreachable before its owned volumes wait for
	// a Fence of it instead of its acknowledgement; unset means the controller's
	// --fence-delay. A member whose network fails often for a short while wants it longer.
	//
	// It is at least 1s. It counts from Unreachable, a whole heartbeat grace after the last
	// heartbeat, so the grace already absorbs a late renewal; 0s would fence no sooner than
	// that, only read as if it did. A short delay costs no data: a volume moves only once the
	// storage confirmed the Fence.
	// +optional
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('1s')",message="fenceDelay must be at least 1s"
	FenceDelay *metav1.Duration `json:"fenceDelay,omitempty"`

	// Priority weighs the target when the scheduler spreads namespaces: its score is
	// priority ÷ (namespaces already placed + 1).
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	Priority int32 `json:"priority,omitempty"`

	// Restricted targets are used only by Placements that name them in spec.targetNames.
	// +optional
	Restricted bool `json:"restricted,omitempty"`
}

// FencingSpec is what a NetworkFence needs to cut a member off a storage domain.
type FencingSpec struct {
	// NodeCIDRs are the addresses of the member's nodes, as the storage sees them. A Fence of
	// the target cuts off every address in them, so none may be /0 (every address, the other
	// targets' included); two targets of one storage domain whose CIDRs overlap are told by
	// their NodeCIDRsExclusive condition.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="self.all(c, isCIDR(c))",message="every entry must be a CIDR such as 10.0.0.0/24"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !isCIDR(c) || cidr(c).prefixLength() > 0)",message="a node CIDR may not be /0: a Fence would cut off every address"
	NodeCIDRs []string `json:"nodeCIDRs"`

	// NetworkFenceClassName names the csi-addons NetworkFenceClass to fence with.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	NetworkFenceClassName string `json:"networkFenceClassName"`
}

// SyncTargetStatus is what Custody observed of the member.
type SyncTargetStatus struct {
	// Key is the target's short, stable id, used as the suffix of every per-target label,
	// annotation and finalizer on hub objects. Once set it never changes.
	// +optional
	// +kubebuilder:validation:MaxLength=56
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the target key is immutable"
	Key string `json:"key,omitempty"`

	// Conditions: Ready is True while the member's syncer renews its heartbeat Lease (in
	// custody-heartbeats, named after the target), which holds the last renewal. As with a
	// node's Lease, a heartbeat does not write the status: a condition changes when what it
	// says changes.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// StorageClasses are the member's StorageClasses, as its syncer reports them.
	// +optional
	// +listType=map
	// +listMapKey=name
	StorageClasses []StorageClassInfo `json:"storageClasses,omitempty"`

	// FenceClients are the clients the member's storage reports of the member, for the
	// NetworkFenceClass of spec.fencing, as csi-addons reports them in the member's
	// CSIAddonsNodes (status.networkFenceClientStatus, from the driver's GetFenceClients).
	// The syncer reports them; the hub checks spec.fencing.nodeCIDRs against them (the
	// FencingVerified condition). Absent while the storage reports none.
	// +optional
	FenceClients *FenceClientsReport `json:"fenceClients,omitempty"`

	// SyncedResources are the resource types the syncer syncs, as resource.group.
	// +optional
	// +listType=set
	SyncedResources []string `json:"syncedResources,omitempty"`

	// ObservedGeneration is the spec generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// FenceClientsReport is what the member's storage says of its clients.
type FenceClientsReport struct {
	// NetworkFenceClassName is the NetworkFenceClass the clients were asked for.
	// +kubebuilder:validation:MaxLength=253
	NetworkFenceClassName string `json:"networkFenceClassName"`
	// Clients are the storage's clients from the member, sorted by id.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +optional
	Clients []FenceClient `json:"clients,omitempty"`
}

// FenceClient is one client of the storage, as csi-addons' ClientDetail names it.
type FenceClient struct {
	// ID identifies the client to the storage.
	// +kubebuilder:validation:MaxLength=253
	ID string `json:"id"`
	// CIDRs are the client's addresses.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	CIDRs []string `json:"cidrs,omitempty"`
}

// StorageClassInfo is one StorageClass of a member.
type StorageClassInfo struct {
	Name        string `json:"name"`
	Provisioner string `json:"provisioner"`
	// +optional
	Parameters map[string]string `json:"parameters,omitempty"`
	// +optional
	ReclaimPolicy corev1.PersistentVolumeReclaimPolicy `json:"reclaimPolicy,omitempty"`
	// +optional
	VolumeBindingMode string `json:"volumeBindingMode,omitempty"`
	// +optional
	AllowVolumeExpansion bool `json:"allowVolumeExpansion,omitempty"`
	// Default is true for the member's default StorageClass.
	// +optional
	Default bool `json:"default,omitempty"`
	// Domain is the storage domain the class's volumes live in, from the class's
	// storage.custody.dev/domain annotation; empty means the class provisions volumes
	// internal to the member.
	// +optional
	Domain string `json:"domain,omitempty"`
}

// SyncTarget is the hub's record of one member cluster. One syncer runs per SyncTarget.
//
// Its name is a DNS label of at most 56 characters, so that it is its own target key
// (ToSyncTargetKey): the hub's admission policy reads the key from the syncer's identity,
// which join names after the target, and Fences and the NetworkFences made of them embed it
// (<target>.<domain>, custody-<target>.<domain>). A name that would not fit there is refused
// when the target is made, not found stalled later. Names starting custody- are Custody's
// own, in the hub and in every member: the controller's ServiceAccount and leader-election
// Lease custody-controller, the syncers' identities, the objects a syncer makes in its
// member. A target may take none of them, whatever Custody names next.
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 56",message="a SyncTarget's name is a DNS label of at most 56 characters: it is the target's key in every per-target label"
// +kubebuilder:validation:XValidation:rule="!self.metadata.name.startsWith('custody-')",message="SyncTarget names starting custody- are reserved for Custody's own objects, such as its controller's Lease custody-controller"
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=st
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.status.key`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Cordoned",type=boolean,JSONPath=`.spec.unschedulable`
// +kubebuilder:printcolumn:name="Domains",type=string,JSONPath=`.spec.storageDomains`
// +kubebuilder:printcolumn:name="Since",type=date,JSONPath=`.status.conditions[?(@.type=="Ready")].lastTransitionTime`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type SyncTarget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   SyncTargetSpec   `json:"spec,omitempty"`
	Status SyncTargetStatus `json:"status,omitempty"`
}

// SyncTargetList is a list of SyncTargets.
// +kubebuilder:object:root=true
type SyncTargetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []SyncTarget `json:"items"`
}

func init() {
	SchemeBuilder.Register(&SyncTarget{}, &SyncTargetList{})
}
