package v1alpha1

import "strings"

// Annotations and finalizers the coordinator keeps on hub objects.
const (
	// VolumeFinalizer holds a hub claim until the coordinator has released its volume.
	VolumeFinalizer = "storage.custody.dev/volume"
	// RecordFinalizer keeps a VolumeOwnership while its claim lives: every step of the claim's
	// volume is written on the record before it is taken, also the release of a claim whose
	// namespace is being deleted, which would otherwise take the record away first.
	RecordFinalizer = "storage.custody.dev/record"
	// HoldFinalizer is the coordination finalizer the coordinator lists in a claim's
	// finalizers.workload.custody.dev/<key> annotation while the claim must not leave <key>.
	HoldFinalizer = "storage.custody.dev/hold"
	// ReleasePolicyAnnotation on a deleted hub claim is the reclaim policy its last target
	// applies to its copy of the volume just before it lets the claim go. Without it, and
	// on every claim that still lives, a syncer makes the copy Retain first.
	ReleasePolicyAnnotation = "storage.custody.dev/release-policy"
	// DomainAnnotation names a storage domain. On a member's StorageClass it is the domain
	// the class's volumes live in (a class without it provisions internal volumes); on a hub
	// claim, coordination writes the domain of its volume there, and the scheduler places the
	// claim's namespace only on targets that reach it; on a hub PV that coordination kept
	// Released for a deleted claim, it is the domain the kept storage lives in.
	DomainAnnotation = "storage.custody.dev/domain"
	// LastOwnerAnnotation on a hub PV that coordination kept Released for a deleted claim
	// (its reclaim policy was Retain, or no target had a copy to release it through when the
	// claim went) is the key of the target that held the volume last: where an admin finds
	// the storage.
	LastOwnerAnnotation = "storage.custody.dev/last-owner"
	// RestoreAnnotation on a hub claim, <key>/<snapshot>, asks the syncer of target <key> to
	// make the claim's copy from the VolumeSnapshot <snapshot> of the claim's namespace in its
	// member (a replica): the copy's dataSourceRef names the snapshot, and the member's
	// storage provisions the volume from it. <key>/<namespace>/<snapshot> restores it from
	// the VolumeSnapshot <snapshot> of hub namespace <namespace>'s downstream namespace in
	// that member instead, a replica another claim's replication keeps there (a DR drill
	// restores into sandbox namespaces so): the syncer imports the replica's storage
	// snapshot into the claim's namespace as a pre-provisioned VolumeSnapshot and its
	// content, which it deletes once the copy is bound (see ReplicaIn).
	RestoreAnnotation = "storage.custody.dev/restore-from"
	// StorageClassAnnotation on a hub claim is the storage class its volume has at the
	// Location it runs in, where that is not the class the claim names: the dr controller
	// writes it with the restore-from annotation when its LocationPair maps the claim's
	// class to another at the Location switched to (spec.storageClassMap), and takes it off
	// when a switch brings the claim back to its own class. Syncers make the claim's copies
	// in that class, and coordination looks for it first on every target.
	StorageClassAnnotation = "storage.custody.dev/storage-class"
)

// ClaimClass is the storage class a hub claim's volume has where it runs: its
// storage-class annotation, else the class it names (nil: the default class).
func ClaimClass(annotations map[string]string, named *string) *string {
	if c, ok := annotations[StorageClassAnnotation]; ok && c != "" {
		return &c
	}
	return named
}

// ProtectLabel set to "false" on a hub claim leaves the claim out of the protection of the
// LocationPair its namespace runs under: its volume does not replicate, never holds up an
// automatic failover, and a switch leaves the claim Pending where it was (NotProtected).
const ProtectLabel = "storage.custody.dev/protect"

// Unprotected tells whether a claim's labels leave it out of its pair's protection.
func Unprotected(labels map[string]string) bool { return labels[ProtectLabel] == "false" }

// StatefulSetAnnotation on a hub claim names the StatefulSet of its namespace whose
// volumeClaimTemplates it was made from (or, for a claim that existed first, whose pod of
// that ordinal uses it): the claim is that set's, and follows its
// persistentVolumeClaimRetentionPolicy when the set scales down.
const StatefulSetAnnotation = "storage.custody.dev/statefulset"

// RestoreFrom reads a claim's restore-from annotation: the key of the target that holds the
// replica and the VolumeSnapshot, an empty snapshot when the switch found none; asked is
// false when the claim has no such annotation.
func RestoreFrom(annotations map[string]string) (target, snapshot string, asked bool) {
	v, asked := annotations[RestoreAnnotation]
	target, snapshot, _ = strings.Cut(v, "/")
	return target, snapshot, asked
}

// ReplicaIn splits a replica's snapshot as RestoreFrom returns it into the hub namespace
// whose downstream namespace holds the VolumeSnapshot and its name: namespace is empty for a
// snapshot of the claim's own namespace.
func ReplicaIn(snapshot string) (namespace, name string) {
	if ns, name, other := strings.Cut(snapshot, "/"); other {
		return ns, name
	}
	return "", snapshot
}
