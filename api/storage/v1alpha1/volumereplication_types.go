package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KeyNamespace is the hub namespace of the pairs' rsync-TLS key Secrets, Custody's own.
const KeyNamespace = "custody-system"

// VolumeReplicationSpec says who replicates one claim's volume to whom, and when.
// +kubebuilder:validation:XValidation:rule="self.source != self.destination",message="a volume replicates between two different targets"
type VolumeReplicationSpec struct {
	// Pair is the LocationPair the replication serves.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Pair string `json:"pair"`
	// Source is the key of the target that owns the volume: its syncer runs a VolSync
	// ReplicationSource (rsync-TLS) for the member's copy of the claim.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Source string `json:"source"`
	// Destination is the key of the target of the other Location that holds the replicas:
	// its syncer runs a VolSync ReplicationDestination that takes a VolumeSnapshot after each
	// sync.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Destination string `json:"destination"`
	// Schedule is the cron schedule of the syncs, from the pair's interval.
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`
	// KeySecret is the hub Secret, in KeyNamespace, that holds the pair's
	// rsync-TLS pre-shared key (psk.txt); both syncers copy it into their member.
	// +kubebuilder:validation:MinLength=1
	KeySecret string `json:"keySecret"`
	// ManualTrigger, when set, asks for one sync now instead of the schedule; the source
	// reports it in status.source.lastManualSync once that sync completed.
	// +optional
	ManualTrigger string `json:"manualTrigger,omitempty"`
	// StorageClassName is the class the destination receives the volume into and keeps its
	// replicas in, where the pair maps the volume's class to another at the destination's
	// Location (the LocationPair's spec.storageClassMap); unset, the class the claim's volume
	// has. The destination takes it when it starts receiving.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
	// KeepImages asks the destination to keep each latest image from VolSync's rotation (the
	// do-not-delete label), while a failover picks the images to restore from: a source that
	// comes back could otherwise sync once more, and VolSync delete the image picked.
	// +optional
	KeepImages bool `json:"keepImages,omitempty"`
}

// ReplicationSourceStatus is what the source's ReplicationSource reported. It is one
// target's report, whole: the report of a source the replication moved to replaces the one
// before, rather than keep the fields it does not set.
// +structType=atomic
type ReplicationSourceStatus struct {
	// ReportedBy is the target whose syncer reported.
	// +optional
	ReportedBy string `json:"reportedBy,omitempty"`
	// LastSyncTime and LastSyncDuration are VolSync's, of the last completed sync: the
	// sync copied the volume as it was at LastSyncTime - LastSyncDuration.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// +optional
	LastSyncDuration *metav1.Duration `json:"lastSyncDuration,omitempty"`
	// NextSyncTime is when the schedule syncs next.
	// +optional
	NextSyncTime *metav1.Time `json:"nextSyncTime,omitempty"`
	// LastManualSync is the manual trigger the last completed sync answered.
	// +optional
	LastManualSync string `json:"lastManualSync,omitempty"`
	// Quiesced: the claim's namespace is quiesced (a relocate stopped its workloads) and no
	// pod in the source's member uses the claim's copy any more; a sync from now on holds
	// every write.
	// +optional
	Quiesced bool `json:"quiesced,omitempty"`
	// Result is the last mover's result, Successful or Failed, and Message its reason.
	// +optional
	Result string `json:"result,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// LastSyncStart is when the last completed sync started, when the copy of the volume was
// taken: LastSyncTime - LastSyncDuration, or LastSyncTime without a duration; zero before a
// sync completed.
func (s *ReplicationSourceStatus) LastSyncStart() time.Time {
	if s.LastSyncTime == nil {
		return time.Time{}
	}
	if s.LastSyncDuration == nil {
		return s.LastSyncTime.Time
	}
	return s.LastSyncTime.Add(-s.LastSyncDuration.Duration)
}

// ReplicationDestinationStatus is what the destination's ReplicationDestination reported.
// It is one target's report, whole: a destination the replication moved to, with no image
// yet, does not report the image of the one before as its own.
// +structType=atomic
type ReplicationDestinationStatus struct {
	// ReportedBy is the target whose syncer reported.
	// +optional
	ReportedBy string `json:"reportedBy,omitempty"`
	// Address and Port are where the source sends to (VolSync's status.rsyncTLS).
	// +optional
	Address string `json:"address,omitempty"`
	// +optional
	Port int32 `json:"port,omitempty"`
	// UID is the ReplicationDestination's. One made again listens at the same address, with
	// no image of the syncs sent to the one before: the source sends to it anew.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// LatestImage is the VolumeSnapshot of the last completed sync, in the claim's namespace
	// of the destination's member.
	// +optional
	LatestImage string `json:"latestImage,omitempty"`
	// LatestImageReady is true once that VolumeSnapshot reports readyToUse: only then may a
	// claim be restored from it.
	// +optional
	LatestImageReady bool `json:"latestImageReady,omitempty"`
	// LatestImageKept is true once that VolumeSnapshot is labelled for VolSync to keep it.
	// +optional
	LatestImageKept bool `json:"latestImageKept,omitempty"`
	// LatestImageTime is when the destination's sync that made LatestImage started
	// (VolSync's lastSyncTime - lastSyncDuration): the source's sync it received started
	// later, so the image holds at least every write acknowledged before it. The
	// destination listens from the end of the sync before, so this is up to an interval
	// early; the dr controller bounds it closer with the source's last sync start.
	// +optional
	LatestImageTime *metav1.Time `json:"latestImageTime,omitempty"`
	// LastSyncTime is VolSync's, of the last completed sync.
	// +optional
	LastSyncTime *metav1.Time `json:"lastSyncTime,omitempty"`
	// Result is the last mover's result, Successful or Failed, and Message its reason.
	// +optional
	Result string `json:"result,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// VolumeReplicationStatus is what the two syncers reported.
type VolumeReplicationStatus struct {
	// Source is the ReplicationSource's report.
	// +optional
	Source *ReplicationSourceStatus `json:"source,omitempty"`
	// Destination is the ReplicationDestination's report.
	// +optional
	Destination *ReplicationDestinationStatus `json:"destination,omitempty"`
}

// VolumeReplication replicates one claim's volume from its owner to a target of the paired
// Location. The dr controller makes it, named as the claim and in its namespace, while the
// claim's namespace runs in a LocationPair's active Location; the syncers of its source and
// destination carry it out with VolSync and report here.
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vr
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Pair",type=string,JSONPath=`.spec.pair`
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.spec.source`
// +kubebuilder:printcolumn:name="Destination",type=string,JSONPath=`.spec.destination`
// +kubebuilder:printcolumn:name="Last-Sync",type=date,JSONPath=`.status.source.lastSyncTime`
// +kubebuilder:printcolumn:name="Result",type=string,JSONPath=`.status.source.result`
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.status.destination.latestImage`,priority=1
type VolumeReplication struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   VolumeReplicationSpec   `json:"spec"`
	Status VolumeReplicationStatus `json:"status,omitempty"`
}

// VolumeReplicationList is a list of VolumeReplications.
// +kubebuilder:object:root=true
type VolumeReplicationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VolumeReplication `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VolumeReplication{}, &VolumeReplicationList{})
}

// Replica is a point-in-time copy of a volume that a claim can be restored from.
type Replica struct {
	// Target is the key of the target whose member holds the VolumeSnapshot.
	Target string `json:"target"`
	// Snapshot is the VolumeSnapshot, in the claim's namespace of that member, or, as
	// <namespace>/<name>, in the downstream namespace of hub namespace <namespace> there (see
	// RestoreAnnotation and ReplicaIn).
	Snapshot string `json:"snapshot"`
	// Time is when the data was taken: the start of the sync that made the snapshot; null
	// where the restore that names the replica does not say (a claim restored from the
	// replica of another claim, as a drill's sandbox is).
	// +optional
	// +nullable
	Time metav1.Time `json:"time"`
}
