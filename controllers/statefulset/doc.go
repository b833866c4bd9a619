// Package statefulset holds the hub's StatefulSet controller. The hub runs no StatefulSet
// controller of Kubernetes' own, so nothing there would make a StatefulSet's claims; this
// controller makes them, so that they are coordinated like any claim and carried to the
// member before the member's StatefulSet controller looks for them by name.
//
// For each hub StatefulSet it creates the claims <template>-<set>-<ordinal> of its
// volumeClaimTemplates for the ordinals spec.ordinals.start up to start + replicas, as
// Kubernetes' StatefulSet controller makes them (pkg/controller/statefulset,
// getPersistentVolumeClaims): the template's metadata and spec, the set's selector labels,
// and a controller reference to the set when persistentVolumeClaimRetentionPolicy.whenDeleted
// is Delete, so that the hub's garbage collector deletes them with the set. Claims that
// exist already, whoever made them, are the set's by name, as in a cluster: their owner
// references follow the policy, unless another controller owns them. Each claim of the set is
// marked with storage.custody.dev/statefulset. When the set scales down with whenScaled
// Delete, the marked claims of the ordinals it no longer has are deleted (Kubernetes makes the
// condemned pod their owner, and the hub has no pods); coordination then releases each volume
// once. With Retain they stay, and a later scale-up finds them again.
//
// The workload controller places a StatefulSet on its namespace's targets with the empty
// state, as it does a claim; this controller turns it to Sync on a target once every claim of
// an ordinal in range is synced there and its syncer has taken it up, and drops the empty
// state of a target the set leaves before it was synced there. So a set starts in a member,
// or after a move, only once its volumes are there. A claim a member made itself anyway
// (a scale-up racing the claim's sync, a set synced before Custody made claims) is adopted by
// the member's syncer (see controllers/syncer/upsync).
package statefulset
