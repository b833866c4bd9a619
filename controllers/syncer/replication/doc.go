// Package replication carries out, in the syncer's member, the VolumeReplications the hub
// gives its target. As the source it runs a VolSync ReplicationSource (rsync-TLS, snapshot
// copy method) for the member's copy of the claim, on the replication's schedule or its
// manual trigger, made again when the replication moves to another destination so that
// it syncs there at once; as the destination it runs a ReplicationDestination that takes a
// VolumeSnapshot after each sync, in the downstream namespace where the claim is restored on
// a failover. Both copy the pair's pre-shared key from the hub into the member, and report
// what VolSync answers into their part of the VolumeReplication's status: the destination
// its address, for the source to send to, and its latest image and whether that snapshot is
// ready; the source its syncs. The syncer's finalizer holds the VolumeReplication until its
// side in the member is gone.
package replication
