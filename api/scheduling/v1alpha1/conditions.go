package v1alpha1

const (
	// PlacementAnnotation is the namespace annotation the placement controller keeps: the
	// names of the Placements bound to the namespace, sorted and comma-separated.
	PlacementAnnotation = "scheduling.custody.dev/placement"
	// PlacementFinalizer holds a Placement until its namespaces are unbound.
	PlacementFinalizer = "scheduling.custody.dev/placement"
	// PairLabel marks the VolumeReplications of a LocationPair with the pair's name.
	PairLabel = "scheduling.custody.dev/pair"
	// QuiesceAnnotation on a hub namespace, set by a LocationPair's relocate to the pair's
	// name, stops its workloads: the syncers remove the copies of its objects that run pods
	// (Pods, Deployments, StatefulSets, Jobs and the like) and make none while it is set;
	// everything else, its claims first, stays. The relocate removes it once the namespace
	// runs in the other Location.
	QuiesceAnnotation = "scheduling.custody.dev/quiesce"
)

// Condition types.
const (
	// ConditionReady (Placement): the selected Location exists and still matches the spec.
	ConditionReady = "Ready"
	// ConditionTargetsAvailable (Placement): the selected Location has a target this
	// Placement may use, and every target it names exists.
	ConditionTargetsAvailable = "TargetsAvailable"
	// ConditionSpecValid (Placement): every selector of the spec parses. While it is False
	// the Placement keeps the Location and namespaces it had.
	ConditionSpecValid = "SpecValid"
	// ConditionNamespacesAllowed (Placement): the namespace selector matches no namespace of
	// the system or of Custody itself (kube-*, custody-*, the heartbeat Leases' namespace).
	// While it is False the Placement places the other namespaces it matches, never those.
	ConditionNamespacesAllowed = "NamespacesAllowed"
	// ConditionSelectorValid (Location): the instance selector parses. While it is False the
	// scheduler leaves the Location's namespaces where they are.
	ConditionSelectorValid = "SelectorValid"
	// ConditionStorageClassesCompatible (Location): every StorageClass that a target of the
	// Location reports is on every target, alike in provisioner, parameters and storage
	// domain, and every target marks the same class default, so that an owned volume may move
	// between any two of them. Unknown while the instance selector does not parse.
	ConditionStorageClassesCompatible = "StorageClassesCompatible"
	// ConditionDataProtected (LocationPair): every volume of the active Location has a
	// replica in the other one from the last two intervals.
	ConditionDataProtected = "DataProtected"
	// ConditionAvailable (LocationPair): a target of the active Location answers.
	ConditionAvailable = "Available"
	// ConditionPeerReady (LocationPair): the other Location can take over: a target of it
	// answers and none is fenced.
	ConditionPeerReady = "PeerReady"
	// ConditionProgressing (LocationPair): a failover or relocate is under way; its reason is
	// the step, and its message what the step waits for.
	ConditionProgressing = "Progressing"
)

// Reasons of conditions and events.
const (
	// ReasonLocationSelected: a Location matching the spec is selected.
	ReasonLocationSelected = "LocationSelected"
	// ReasonNoMatchingLocation: no Location matches the spec.
	ReasonNoMatchingLocation = "NoMatchingLocation"
	// ReasonLocationNotFound: the Location the spec names does not exist.
	ReasonLocationNotFound = "LocationNotFound"
	// ReasonInvalidSelector: a selector does not parse.
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonSelectorValid: the selector parses.
	ReasonSelectorValid = "SelectorValid"
	// ReasonNamespacesAllowed: every namespace the selector matches may be placed.
	ReasonNamespacesAllowed = "NamespacesAllowed"
	// ReasonSystemNamespacesRefused: the selector matches namespaces of the system or of
	// Custody, which are never placed; the condition's message names them.
	ReasonSystemNamespacesRefused = "SystemNamespacesRefused"
	// ReasonTargetsAvailable: the Location has targets this Placement may use.
	ReasonTargetsAvailable = "TargetsAvailable"
	// ReasonTargetNotFound: a target the spec names does not exist.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetRestricted: the Location's only usable targets are restricted, and the
	// Placement does not name them.
	ReasonTargetRestricted = "TargetRestricted"
	// ReasonNoEligibleTarget: no target of the Location passes the scheduler's filter.
	ReasonNoEligibleTarget = "NoEligibleTarget"
	// ReasonScheduled: a namespace was placed on a target.
	ReasonScheduled = "Scheduled"
	// ReasonRemoved: a namespace's removal from a target was requested.
	ReasonRemoved = "Removed"
	// ReasonStorageClassesMatch: the Location's targets report the same StorageClasses, alike
	// in every field.
	ReasonStorageClassesMatch = "StorageClassesMatch"
	// ReasonStorageClassesNotReported: no target of the Location has reported its
	// StorageClasses yet: there is nothing to compare.
	ReasonStorageClassesNotReported = "StorageClassesNotReported"
	// ReasonStorageClassSettingsDiffer: the targets agree in every field that moves depend on,
	// but a class differs in reclaim policy, binding mode, expansion or the default flag.
	ReasonStorageClassSettingsDiffer = "StorageClassSettingsDiffer"
	// ReasonStorageClassMismatch: a class differs between targets in provisioner, parameters
	// or storage domain; its volumes do not move between those targets.
	ReasonStorageClassMismatch = "StorageClassMismatch"
	// ReasonStorageClassMissing: a class is missing on some targets, and no class differs;
	// its volumes do not move to those targets.
	ReasonStorageClassMissing = "StorageClassMissing"
	// ReasonDefaultStorageClassMismatch: the targets mark different classes default (or some
	// none), and no class differs or is missing; the volumes of claims that name no class do
	// not move between those targets.
	ReasonDefaultStorageClassMismatch = "DefaultStorageClassMismatch"
	// ReasonLocationAvailable: a target of the Location answers.
	ReasonLocationAvailable = "LocationAvailable"
	// ReasonLocationUnavailable: no target of the Location answers.
	ReasonLocationUnavailable = "LocationUnavailable"
	// ReasonPeerReady: the other Location can take over.
	ReasonPeerReady = "PeerReady"
	// ReasonPeerFenced: a target of the other Location is still fenced after a failover away
	// from it; it takes replicas again once it returned clean and was unfenced.
	ReasonPeerFenced = "PeerFenced"
	// ReasonReplicated: every volume has a recent replica.
	ReasonReplicated = "Replicated"
	// ReasonNoReplica: a volume has no replica yet.
	ReasonNoReplica = "NoReplica"
	// ReasonNotProtected: the claim is labelled storage.custody.dev/protect=false: the pair
	// does not replicate its volume.
	ReasonNotProtected = "NotProtected"
	// ReasonReplicationLagging: a volume's latest replica is older than two intervals.
	ReasonReplicationLagging = "ReplicationLagging"
	// ReasonSyncFailed: a volume's last sync failed; it is retried on the schedule.
	ReasonSyncFailed = "SyncFailed"
	// ReasonNoVolumes: no volume replicates.
	ReasonNoVolumes = "NoVolumes"
	// ReasonIdle: no failover or relocate is under way.
	ReasonIdle = "Idle"
	// ReasonSwitchCompleted: a failover or relocate completed (an event's reason, with what
	// it cost).
	ReasonSwitchCompleted = "SwitchCompleted"
	// ReasonFailoverCalledOff: the last failover, one the pair started on its own, was
	// called off, as the Location it left answered again before it was fenced.
	ReasonFailoverCalledOff = "FailoverCalledOff"
	// ReasonWaitingForReplicas: a relocate was asked, and waits until every volume has a
	// ready replica in the other Location, so that it loses nothing.
	ReasonWaitingForReplicas = "WaitingForReplicas"
	// ReasonMassFailure: the active Location is lost, but more of the hub's targets are
	// Unreachable at once than the controller's brake allows (--mass-failure-share): the pair
	// does not fail over by itself, as a split of the hub's network looks the same. A
	// declared failover still goes ahead.
	ReasonMassFailure = "MassFailure"
	// ReasonFencingUnverified: the active Location is lost, but a target of it that no Fence
	// holds yet has node CIDRs that do not match the clients its storage reports (its
	// FencingVerified condition): a Fence of it might not cut it off, so the pair does not
	// fail over by itself until an admin corrects spec.fencing or fences the member by hand.
	// A declared failover still goes ahead.
	ReasonFencingUnverified = "FencingUnverified"
	// ReasonLocationsOverlap: a target is in both Locations of the pair, which then neither
	// replicates nor switches.
	ReasonLocationsOverlap = "LocationsOverlap"
	// ReasonStorageClassUnmapped: a volume cannot replicate, as the target that would hold
	// its replicas has no storage class of the claim's name (or no default class, for a claim
	// that names none).
	ReasonStorageClassUnmapped = "StorageClassUnmapped"
)

// Reasons of a Drill's Ready condition.
const (
	// ReasonPairNotFound: the Drill's pair does not exist.
	ReasonPairNotFound = "PairNotFound"
	// ReasonPairSwitching: the pair has no active Location yet, or a failover or relocate of
	// it is under way: the drill starts once it completed.
	ReasonPairSwitching = "PairSwitching"
	// ReasonDrillInProgress: another Drill of the same pair runs; this one starts once it
	// ended.
	ReasonDrillInProgress = "DrillInProgress"
	// ReasonNamespaceTaken: a sandbox's namespace exists and is not the drill's.
	ReasonNamespaceTaken = "NamespaceTaken"
	// ReasonRestoring and ReasonStarting: the drill waits for its claims to be bound, or its
	// workloads to be ready.
	ReasonRestoring = "Restoring"
	ReasonStarting  = "Starting"
	// ReasonDrillReady: every claim of the sandboxes is bound and every workload ready.
	ReasonDrillReady = "DrillReady"
	// ReasonDrillEnding: the drill was ended; its sandboxes are being removed.
	ReasonDrillEnding = "DrillEnding"
)
