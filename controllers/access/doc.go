// Package access grants each target's syncer identity its hub reads where, and only where,
// its target holds something, as Karmada's and Open Cluster Management's agents are scoped:
//
//   - in each namespace placed on the target (the namespace labelled Sync or Upsync for it),
//     a RoleBinding to the ClusterRole custody-syncer-namespace: the namespaced objects it
//     syncs, reads and holds there;
//   - in each namespace where the target holds replicas of a claim placed elsewhere (a
//     VolumeReplication labelled for it), a RoleBinding to custody-syncer-replica: the claim;
//   - in custody-system, a Role and RoleBinding that let it get the key Secrets of the
//     VolumeReplications labelled for it, by name.
//
// A grant goes when what it was for goes: the namespace's label leaves only once the
// syncer let go of the namespace, and the namespace only once nothing synced in it is left.
// The syncer's cache (controllers/syncer/placedcache) starts a namespace's informers once
// the grant is there. Every grant carries TargetLabel, which the controller's cache selects.
package access
