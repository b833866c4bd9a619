package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SwitchMode is how a change of a LocationPair's active Location is carried out; in the
// pair's history, Drill is a rehearsal of a failover (a Drill), which changed nothing.
type SwitchMode string

const (
	// Relocate is planned and loses nothing: the workloads stop at the active Location, a last
	// sync runs, and the volumes are restored from it on the other side. It needs the active
	// Location's targets to answer.
	Relocate SwitchMode = "Relocate"
	// Failover fences the active Location where its storage can still be reached and restores
	// each volume from its latest replica: what was written since that replica is lost.
	Failover SwitchMode = "Failover"
	// DrillMode, only in a PairAction, is a Drill of the pair: a failover rehearsed into
	// sandboxes at the Location the pair did not run in, while it kept running.
	DrillMode SwitchMode = "Drill"
)

// LocationPairSpec pairs two Locations for disaster recovery.
// +kubebuilder:validation:XValidation:rule="self.primary != self.secondary",message="the primary and the secondary must be two different Locations"
// +kubebuilder:validation:XValidation:rule="!has(self.activeLocation) || size(self.activeLocation) == 0 || self.activeLocation == self.primary || self.activeLocation == self.secondary",message="activeLocation must be the primary or the secondary"
type LocationPairSpec struct {
	// Primary is the Location the pair's namespaces run in until a failover or a relocate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the primary of a LocationPair cannot change"
	Primary string `json:"primary"`

	// Secondary is the Location that holds the replicas and takes over.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="the secondary of a LocationPair cannot change"
	Secondary string `json:"secondary"`

	// ReplicationInterval is how often each volume is replicated, as minutes (1-59), hours
	// (1-23) or days (1-28): "5m", "1h", "1d". It is the recovery point objective.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:Pattern=`^(([1-9]|[1-5][0-9])m|([1-9]|1[0-9]|2[0-3])h|([1-9]|1[0-9]|2[0-8])d)$`
	// +optional
	ReplicationInterval string `json:"replicationInterval,omitempty"`

	// FailoverThreshold is how long every target of the active Location must have been
	// Unreachable before the pair fails over on its own.
	//
	// It is at least 3s, the shortest heartbeat grace (three periods of a Lease's whole
	// seconds). It counts from Unreachable, itself a grace after the last heartbeat, so 0s is
	// not an instant failover; and a failover loses what was written since the last replicas,
	// so the Location must stay silent at least as long again as it took to call it
	// Unreachable: a lapse of heartbeats on busy hosts is not a lost site.
	// +kubebuilder:default="5m"
	// +kubebuilder:validation:XValidation:rule="duration(self) >= duration('3s')",message="failoverThreshold must be at least 3s"
	// +optional
	FailoverThreshold *metav1.Duration `json:"failoverThreshold,omitempty"`

	// AutomaticFailover lets the pair fail over on its own once the active Location is lost.
	// +kubebuilder:default=true
	// +optional
	AutomaticFailover *bool `json:"automaticFailover,omitempty"`

	// ActiveLocation declares where the pair's namespaces run. Empty leaves the choice to
	// Custody: the primary, or the secondary after an automatic failover. Setting it to the
	// other Location asks for a switch, carried out as SwitchMode says; a lost active
	// Location is always failed over.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	ActiveLocation string `json:"activeLocation,omitempty"`

	// SwitchMode is how a declared switch is carried out: Relocate (planned, lossless) or
	// Failover (fence, restore from the latest replicas).
	// +kubebuilder:default=Relocate
	// +kubebuilder:validation:Enum=Relocate;Failover
	// +optional
	SwitchMode SwitchMode `json:"switchMode,omitempty"`

	// StorageClassMap names the storage classes that are the same storage under another
	// name at the other Location, as Ramen's peerClasses and Velero's change-storage-class
	// do. A volume whose class at the Location it runs in is mapped is replicated into the
	// mapped class, and restored in it by a switch; a class that is not mapped keeps its
	// name on both sides. A claim that names no class gets each side's default class.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(m, self.exists_one(n, n.primary == m.primary))",message="a class of the primary is mapped once at most"
	// +kubebuilder:validation:XValidation:rule="self.all(m, self.exists_one(n, n.secondary == m.secondary))",message="a class of the secondary is mapped once at most"
	// +optional
	StorageClassMap []StorageClassMapping `json:"storageClassMap,omitempty"`
}

// StorageClassMapping names one storage class at each Location of a pair.
type StorageClassMapping struct {
	// Primary is the class's name at the primary Location.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Primary string `json:"primary"`
	// Secondary is the class's name at the secondary Location.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Secondary string `json:"secondary"`
}

// ConditionLocationsExclusive (LocationPair) is True while no other LocationPair has either
// Location of the pair. False names the other pairs; the pair made later, of two sharing a
// Location, is not acted on (no replication, no failover, no relocate) while the earlier
// exists, so that a second pair never undoes the protection the first gives.
const ConditionLocationsExclusive = "LocationsExclusive"

// Reasons of the LocationsExclusive condition.
const (
	// ReasonLocationsExclusive: no other pair has either Location of the pair.
	ReasonLocationsExclusive = "LocationsExclusive"
	// ReasonLocationShared: another pair has a Location of the pair.
	ReasonLocationShared = "LocationShared"
)

// LocationPairPhase is where a LocationPair stands.
// +kubebuilder:validation:Enum=Pending;Protecting;FailingOver;FailedOver;Relocating;Relocated
type LocationPairPhase string

const (
	// PairPending: a Location of the pair is missing or has no target yet, or a pair made
	// before it shares one of its Locations.
	PairPending LocationPairPhase = "Pending"
	// PairProtecting: the volumes of the active Location replicate to the other one.
	PairProtecting LocationPairPhase = "Protecting"
	// PairFailingOver: a failover is under way.
	PairFailingOver LocationPairPhase = "FailingOver"
	// PairFailedOver: the failover is done; the volumes are not yet replicated back, as the
	// old active Location has not returned and cleaned up.
	PairFailedOver LocationPairPhase = "FailedOver"
	// PairRelocating: a relocate is under way.
	PairRelocating LocationPairPhase = "Relocating"
	// PairRelocated: the relocate is done; the first sync the other way has not completed.
	PairRelocated LocationPairPhase = "Relocated"
)

// Progressions of a PairAction: the steps of a failover or a relocate, and how it ended. A
// failover goes from Fencing to Restoring, Starting and Completed, or is CalledOff while it
// fences; a relocate goes from Quiescing to FinalSync, Restoring, Starting and Completed,
// unless it becomes a failover on the way. They double as the reasons of the Progressing condition.
const (
	// ProgressionFencing: a failover waits until every target of the Location it leaves that
	// still answers is fenced off the storage.
	ProgressionFencing = "Fencing"
	// ProgressionQuiescing: a relocate waits until the workloads no longer run at the
	// Location it leaves, and each source answered a manual trigger that ends its schedule.
	ProgressionQuiescing = "Quiescing"
	// ProgressionFinalSync: a relocate waits until a last sync of every volume, asked for with
	// a manual trigger after the workloads stopped, is in a ready snapshot.
	ProgressionFinalSync = "FinalSync"
	// ProgressionRestoring: the other Location is active; its targets restore the claims from
	// their replicas.
	ProgressionRestoring = "Restoring"
	// ProgressionStarting: every claim that had a replica is bound at the new active
	// Location, where the workloads of the pair's namespaces start; a relocate's are let go
	// of. The switch waits until every Deployment and StatefulSet there reports its replicas
	// ready, as Ramen's WaitForReadiness does.
	ProgressionStarting = "Starting"
	// ProgressionCompleted: every claim that had a replica is bound at the new active
	// Location, and every workload of the pair's namespaces is ready there.
	ProgressionCompleted = "Completed"
	// ProgressionCalledOff: an automatic failover found the Location it leaves answering
	// again before that was fenced; nothing was restored, and that Location stays active.
	ProgressionCalledOff = "CalledOff"
)

// Triggers of a PairAction: what started it.
const (
	// TriggerLocationLost: every target of the active Location stopped answering for the
	// pair's failover threshold, and the pair failed over on its own.
	TriggerLocationLost = "LocationLost"
	// TriggerDeclared: an admin declared another active Location (kubectl custody failover
	// or relocate, or spec.activeLocation).
	TriggerDeclared = "Declared"
)

// HistoryLength is how many past switches a LocationPair's status keeps.
const HistoryLength = 10

// PairStep is a step a switch reached, and when.
type PairStep struct {
	// Progression is the step: one of the progressions of a PairAction.
	Progression string `json:"progression"`
	// Time is when the switch reached it.
	Time metav1.Time `json:"time"`
}

// PairAction is a failover or relocate, as it ran.
type PairAction struct {
	// Trigger is what started it: LocationLost or Declared.
	// +optional
	Trigger string `json:"trigger,omitempty"`
	// TriggerTime is when the loss began (the last target of the Location left stopped
	// heartbeating: its Ready condition's transition to Unreachable), or when the switch was
	// declared: the recovery time is counted from it.
	// +optional
	TriggerTime *metav1.Time `json:"triggerTime,omitempty"`
	// Mode is Failover, Relocate, or Drill for a Drill of the pair, which switched nothing:
	// To is where it ran, its recovery time the drill's RTO and its recovery point the
	// drill's data window.
	// +kubebuilder:validation:Enum=Relocate;Failover;Drill
	Mode SwitchMode `json:"mode"`
	// Automatic is true for a failover the pair started on its own.
	// +optional
	Automatic bool `json:"automatic,omitempty"`
	// From and To are the Locations switched between.
	From string `json:"from"`
	To   string `json:"to"`
	// Generation is the spec generation the action answered: a declared activeLocation
	// starts a switch only in a newer one, so that an automatic failover is not undone by an
	// activeLocation declared before it.
	// +optional
	Generation int64 `json:"generation,omitempty"`
	// Progression is the step the action is at, or Completed; or CalledOff, for a failover
	// the pair started on its own whose Location answered again before it was fenced.
	// +optional
	Progression string `json:"progression,omitempty"`
	// ProgressionTime is when the action reached its step.
	// +optional
	ProgressionTime *metav1.Time `json:"progressionTime,omitempty"`
	// StartTime is when the action started.
	StartTime metav1.Time `json:"startTime"`
	// CompletionTime is when every volume was bound at To again and every workload ready.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// Duration is CompletionTime - StartTime.
	// +optional
	Duration *metav1.Duration `json:"duration,omitempty"`
	// OldestReplicaTime is, for a failover, the time of the oldest replica a volume came back
	// from: the data written since then at From was lost.
	// +optional
	OldestReplicaTime *metav1.Time `json:"oldestReplicaTime,omitempty"`
	// Steps are the progressions the switch reached, in order, with their times.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	Steps []PairStep `json:"steps,omitempty"`
	// RecoveryTime is the recovery time measured: from TriggerTime to every volume with a
	// replica bound at To.
	// +optional
	RecoveryTime *metav1.Duration `json:"recoveryTime,omitempty"`
	// RecoveryPoint is the recovery point measured: for a failover, TriggerTime less
	// OldestReplicaTime, the longest stretch of writes a volume lost; zero for a relocate,
	// which restores from a last sync taken after the workloads stopped.
	// +optional
	RecoveryPoint *metav1.Duration `json:"recoveryPoint,omitempty"`
	// Restored counts the volumes restored at To from a replica, SetAside those whose
	// volume at From was set aside for them (its storage kept), and Waiting those of From
	// left Pending for want of a replica, or of protection (storagev1alpha1.ProtectLabel).
	// +optional
	Restored int32 `json:"restored,omitempty"`
	// +optional
	SetAside int32 `json:"setAside,omitempty"`
	// +optional
	Waiting int32 `json:"waiting,omitempty"`
	// ProtectedAgain is how long after the switch completed the pair protected again: every
	// volume had a replica taken at the Location the switch left, once that was back, clean
	// and unfenced, and had synced once.
	// +optional
	ProtectedAgain *metav1.Duration `json:"protectedAgain,omitempty"`
	// ReturnTime is when, after the switch completed, the pair first saw the Location it
	// left able to take replicas again: a target of it Ready, clean and no Fence holding it
	// (for a failover, once its Fence was lifted).
	// +optional
	ReturnTime *metav1.Time `json:"returnTime,omitempty"`
	// ReturnSync is the longest of the syncs that protected the pair again from the Location
	// switched to: of the time from ReturnTime to protected again, the part the replication
	// itself took.
	// +optional
	ReturnSync *metav1.Duration `json:"returnSync,omitempty"`
}

// ProtectedAfterReturn is how long after the Location the switch left could take replicas
// again the pair protected again; nil until both are known.
func (a *PairAction) ProtectedAfterReturn() *metav1.Duration {
	if a.ReturnTime == nil || a.ProtectedAgain == nil || a.CompletionTime == nil {
		return nil
	}
	return &metav1.Duration{Duration: a.CompletionTime.Add(a.ProtectedAgain.Duration).Sub(a.ReturnTime.Time)}
}

// Over tells whether the action ended: completed, or called off.
func (a *PairAction) Over() bool {
	return a.Progression == ProgressionCompleted || a.Progression == ProgressionCalledOff
}

// LocationPairStatus is where the pair stands.
type LocationPairStatus struct {
	// ActiveLocation is where the pair's namespaces run now. A switch makes it the Location
	// switched to once every claim of the Location left is asked to restore there.
	// +optional
	ActiveLocation string `json:"activeLocation,omitempty"`
	// Phase is Pending, Protecting, FailingOver, FailedOver, Relocating or Relocated.
	// +optional
	Phase LocationPairPhase `json:"phase,omitempty"`
	// Volumes is the number of volumes of the pair's namespaces that replicate, and
	// ProtectedVolumes those of them with a replica.
	// +optional
	Volumes int32 `json:"volumes"`
	// +optional
	ProtectedVolumes int32 `json:"protectedVolumes"`
	// OldestLastSyncTime is the oldest of the volumes' last completed syncs: what a failover
	// now would lose is what was written since.
	// +optional
	OldestLastSyncTime *metav1.Time `json:"oldestLastSyncTime,omitempty"`
	// LastAction is the latest failover or relocate.
	// +optional
	LastAction *PairAction `json:"lastAction,omitempty"`
	// History are the switches that ended (completed or called off), oldest first, the last
	// HistoryLength of them.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	History []PairAction `json:"history,omitempty"`
	// Conditions: DataProtected (every volume has a replica at most one interval and one
	// sync old), Available (the active Location has a Ready target), PeerReady (the other
	// Location can take over: a Ready target, clean, and no Fence left on it),
	// LocationsExclusive (no other pair has either Location).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// ObservedGeneration is the spec generation the status speaks of.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// LocationPair pairs a primary and a secondary Location: the volumes of the namespaces
// placed on the active one replicate to the other, which takes over when the active one is
// lost or an admin switches.
//
// Its name is at most 63 characters: it is the value of the label PairLabel on the pair's
// VolumeReplications, and a pair that could not label them would never replicate.
//
// A Location belongs to one pair at a time. Two pairs sharing one would replicate its
// volumes twice and could fail its Placements over to two places, and a rule over two
// objects is beyond a CRD's validation: both pairs say so in their LocationsExclusive
// condition, naming each other, and only the pair made first is acted on.
// +kubebuilder:object:root=true
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="a LocationPair's name is at most 63 characters: it labels the pair's VolumeReplications"
// +kubebuilder:resource:scope=Cluster,shortName=lp
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Primary",type=string,JSONPath=`.spec.primary`
// +kubebuilder:printcolumn:name="Secondary",type=string,JSONPath=`.spec.secondary`
// +kubebuilder:printcolumn:name="Active",type=string,JSONPath=`.status.activeLocation`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Protected",type=string,JSONPath=`.status.conditions[?(@.type=="DataProtected")].status`
// +kubebuilder:printcolumn:name="Last-Sync",type=date,JSONPath=`.status.oldestLastSyncTime`
// +kubebuilder:printcolumn:name="Interval",type=string,JSONPath=`.spec.replicationInterval`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type LocationPair struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   LocationPairSpec   `json:"spec"`
	Status LocationPairStatus `json:"status,omitempty"`
}

// LocationPairList is a list of LocationPairs.
// +kubebuilder:object:root=true
type LocationPairList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []LocationPair `json:"items"`
}

func init() {
	SchemeBuilder.Register(&LocationPair{}, &LocationPairList{})
}

// Active is the Location the pair's namespaces run in now: the status's, or the primary
// before the controller first said.
func (p *LocationPair) Active() string {
	if p.Status.ActiveLocation != "" {
		return p.Status.ActiveLocation
	}
	return p.Spec.Primary
}

// Peer is the Location of the pair that is not loc.
func (p *LocationPair) Peer(loc string) string {
	if loc == p.Spec.Primary {
		return p.Spec.Secondary
	}
	return p.Spec.Primary
}

// Has tells whether loc is one of the pair's Locations.
func (p *LocationPair) Has(loc string) bool {
	return loc == p.Spec.Primary || loc == p.Spec.Secondary
}
