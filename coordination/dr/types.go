package dr

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// Target is what the decision reads of one SyncTarget of the pair's Locations.
type Target struct {
	Key string
	// Ready: the target's syncer heartbeats.
	Ready bool
	// UnreachableSince is when the target stopped answering; zero while it answers.
	UnreachableSince time.Time
	// ReadySince is when the target last turned Ready; zero while it is not, or when not
	// known.
	ReadySince time.Time
	// Fence is where the target's Fences stand: Fenced only when one holds in every domain
	// the target reaches.
	Fence fencing.State
	// Clean: the target reported that it holds nothing the hub no longer gives it, and
	// Reported is when it last made that report
	// (workloadv1alpha1.SyncTarget.CleanReportedAt).
	Clean    bool
	Reported time.Time
	// Classes are the names of the storage classes the target reports, and DefaultClass the
	// one marked default, if any.
	Classes      []string
	DefaultClass string
	// Cordoned: the target takes no namespace it does not hold, so a switch could not
	// restore a volume there.
	Cordoned bool
	// Unverified says why a Fence of the target might not cut it off: its node CIDRs do not
	// match the clients its storage reports; empty when they do, or cannot be told.
	Unverified string
}

// Location is one Location of the pair, with its targets.
type Location struct {
	Name string
	// Found: the Location exists and its selector parses.
	Found   bool
	Targets []Target
}

// Replication is what the two syncers of a volume's VolumeReplication reported.
type Replication struct {
	Source, Destination string
	// Class is the class the destination keeps the replicas in (Want.Class).
	Class *string
	// KeepImages: the replication asks its destination to keep its images (Want.KeepImages).
	KeepImages bool
	// SourceLastSyncStart and SourceLastSync are the ReplicationSource's last completed sync.
	SourceLastSyncStart, SourceLastSync time.Time
	// LastManualSync is the manual trigger the source's last completed sync answered.
	LastManualSync string
	// Quiesced: the source reports that the claim's namespace is quiesced and no pod uses
	// its copy any more.
	Quiesced bool
	// Failed and Message: the last mover of either side failed, and why.
	Failed  bool
	Message string
	// DestinationLastSync is the ReplicationDestination's last completed sync.
	DestinationLastSync time.Time
	// Image is the destination's latest snapshot, and ImageReady whether it is ready to use.
	Image      *storagev1alpha1.Replica
	ImageReady bool
	// ImageKept: the destination labelled the image for VolSync to keep it.
	ImageKept bool
}

// Volume is one claim of a namespace the pair's Placements bind.
type Volume struct {
	Namespace, Claim string
	// Owner is the key of the target that owns or provisions the volume; empty while none.
	Owner string
	// Bound: the volume is bound and in use on its owner.
	Bound bool
	// Replica is the replica the claim's VolumeOwnership records.
	Replica *storagev1alpha1.Replica
	// Replication is its VolumeReplication's reports; nil while there is none.
	Replication *Replication
	// Restore is the claim's restore-from annotation; nil while it has none.
	Restore *string
	// StorageClass is the class the volume has at the Location it runs in (the claim's
	// storage-class annotation, else the class it names), and NamedClass the class the claim
	// names; nil is the default class.
	StorageClass, NamedClass *string
	// SetAsideAt is when the volume the claim's last restore replaced was set aside; zero
	// when none was.
	SetAsideAt time.Time
}

// Pair is the LocationPair's spec, parsed.
type Pair struct {
	Primary, Secondary string
	// Declared is spec.activeLocation, and Generation the spec's generation.
	Declared   string
	Generation int64
	Mode       schedulingv1alpha1.SwitchMode
	Automatic  bool
	Threshold  time.Duration
	Interval   time.Duration
	// Schedule is the cron schedule of the interval.
	Schedule string
	// Classes is spec.storageClassMap.
	Classes []schedulingv1alpha1.StorageClassMapping
}

// Observation is everything Decide reads about one pair.
type Observation struct {
	Now  time.Time
	Pair Pair
	// Active, Action and History are the pair's status so far.
	Active  string
	Action  *schedulingv1alpha1.PairAction
	History []schedulingv1alpha1.PairAction
	// Locations are the pair's two Locations, by name.
	Locations map[string]Location
	// Quiesced: no workload of the pair's namespaces runs at Action.From any more: the source
	// of every replication says so.
	Quiesced bool
	// Volumes are the claims of the namespaces the pair's Placements bind, and Unprotected
	// those of them labelled out of the pair's protection (storagev1alpha1.ProtectLabel),
	// which a switch only tells that it left them.
	Volumes, Unprotected []Volume
	// Workloads are the Deployments and StatefulSets of those namespaces.
	Workloads []Workload
	// Drills are the history entries of the pair's Drills that were ready or ended
	// (DrillRecord).
	Drills []schedulingv1alpha1.PairAction
	// Targets counts the hub's targets, Unreachable those that do not answer; with Brake,
	// they hold back a failover the pair would start on its own.
	Targets, Unreachable int
	Brake                fencing.Brake
}

// Want is a VolumeReplication the pair needs.
type Want struct {
	Namespace, Claim    string
	Source, Destination string
	// Class is the class the destination keeps the replicas in, where the pair maps the
	// volume's class to another at the destination's Location; nil: the volume's class.
	Class *string
	// ManualTrigger asks the source for one sync now; empty follows the schedule.
	ManualTrigger string
	// KeepImages asks the destination to keep its images from VolSync's rotation.
	KeepImages bool
}

// Decision is what the dr controller writes for one pair.
type Decision struct {
	Active string
	Phase  schedulingv1alpha1.LocationPairPhase
	// Action is the latest failover or relocate, as it stands after this decision, and
	// History the switches that ended, with Action if it ended in this decision; Ended says
	// that it did.
	Action  *schedulingv1alpha1.PairAction
	History []schedulingv1alpha1.PairAction
	Ended   bool
	// Fence are the keys of the targets to fence (a Fence per domain each reaches).
	Fence []string
	// Quiesce: stop the workloads of the pair's namespaces at Action.From.
	Quiesce bool
	// Replications are the VolumeReplications to keep; any other of the pair goes.
	Replications []Want
	// Replicas are the replicas to record on the claims' VolumeOwnerships, by
	// namespace/claim, where they differ from the recorded ones.
	Replicas map[string]storagev1alpha1.Replica
	// Restores are the restore-from annotations to write on the claims, by namespace/claim,
	// where they differ from the claims' own: <target key>/<snapshot>, or empty when the
	// volume has no replica; Unrestores are the claims whose annotation goes, their restore
	// being over.
	Restores   map[string]string
	Unrestores []string
	// Classes are the storage-class annotations to write with Restores, by namespace/claim,
	// where they differ from the claims' own: the class the pair maps the volume's to at the
	// Location switched to, or empty where that is the class the claim names.
	Classes map[string]string
	// Recheck is when the pair must be looked at again, though nothing changes: the active
	// Location's targets are all Unreachable, and it counts as lost once that much more time
	// passed; or a protected volume's replica turns two intervals old. Zero when no such time
	// is coming.
	Recheck time.Duration
	// Waiting says why a declared switch, or a failover of a lost Location, has not started
	// yet, and WaitingReason is the Progressing condition's reason for it (empty:
	// WaitingForReplicas).
	Waiting, WaitingReason string
	// Volumes counts the replicated volumes, Protected those with a recent replica, and
	// OldestLastSync is the oldest replica's time among them.
	Volumes, Protected int32
	OldestLastSync     time.Time
	// Unreported are the workloads, by Workload.Key, whose status to clear: a switch's
	// Starting step found it written before the step began, by the Location left.
	Unreported []string
	// Unmapped says, per volume that cannot replicate for want of its storage class on the
	// target that would hold its replicas, which class on which target.
	Unmapped map[string]string
	// VolumeConditions are the Replicated conditions of the volumes the pair replicates or
	// cannot, by namespace/claim.
	VolumeConditions map[string]metav1.Condition
	Conditions       []metav1.Condition
}

// Workload is a Deployment or StatefulSet of the pair's namespaces, as its hub object tells:
// its status is the report of the one target that runs it and reports it.
type Workload struct {
	Namespace, Kind, Name string
	// Replicas is what its spec asks for, and Ready the replicas its status says are ready.
	Replicas, Ready int32
	// Reported is when its status was last written (zero: never).
	Reported time.Time
}

// Key names the workload in Decision.Unreported: namespace/Kind/name.
func (w Workload) Key() string { return w.Namespace + "/" + w.Kind + "/" + w.Name }

// Key is a volume's key in Decision.Replicas.
func (v Volume) Key() string { return v.Namespace + "/" + v.Claim }

// Key is the key of the replication's volume, as Volume.Key.
func (w Want) Key() string { return w.Namespace + "/" + w.Claim }
