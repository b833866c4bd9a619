// Package syncer runs the syncer of one SyncTarget: Run connects to the hub and to the
// member, and runs the syncer's controllers until its context ends. The binary in
// cmd/syncer, the tests and the local environment all run it through Run.
//
// The syncer's view of the hub is a cache of only the objects labelled Sync or Upsync for its
// target key (the key derives from the SyncTarget's name, so the hub never has to tell it),
// plus its own SyncTarget. Namespaced objects are watched per namespace placed on the target
// (package placedcache), as its hub identity may read them only there. Its view of the member is a cache of only the objects it created
// (marked with its target key and the hub's identity), plus the member's PVs and
// StorageClasses. The controllers:
//
//   - downsync, one per resource type: hub objects down, status up, the deletion flow;
//   - upsync: PVs the member provisions for synced claims, up to the hub;
//   - heartbeat: the target's heartbeat Lease and the member's report in SyncTarget status.
//
// They share package transform, the pure translation of a hub object into its copy and of a
// member's PV into a hub PV, and package internal/syncio, the reads and writes around it that
// more than one of them makes.
//
// # What the syncer caches
//
// A syncer runs next to every member's workloads, so it caches only what its decisions read:
//
//   - from the hub, the objects labelled Sync or Upsync for its target (and the VolumeReplications
//     of every namespace, as a pair's destination holds replicas of namespaces not placed on
//     it), plus its own SyncTarget; from the member, what it created, plus every PV, claim and
//     StorageClass. Claims and PVs are the bulk: at ten thousand claims, four informers of ten
//     thousand objects each (hub and member, claims and PVs).
//   - each kind once, unstructured, as the controllers read it: a typed read of a cached kind
//     would start a second informer of every object of it. A controller that wants a typed
//     claim or PV converts the unstructured one (see downsync's memberPV).
//   - whole objects, but for managed fields and kubectl's last applied configuration (trimCached):
//     a copy carries a hub object's spec, labels and annotations, the status goes up, and the
//     comparison with the copy (transform.UpToDate) reads them all, so no other field can go
//     without a write at every resync.
//   - packed (package packedcache): each object's content encoded in one string, a quarter of
//     its size decoded, which every read decodes again for its reader, whole and as it was.
//   - no decoding of what it reads in a loop: the heartbeat's clean report goes over every
//     cached claim and PV each period, reading their labels, annotations and the few fields
//     it needs in place (transform.Label, transform.Annotation, packedcache.Object) from
//     lists of the packed objects themselves.
//
// The hub's identity (the UID of its kube-system namespace, or the one a restored hub keeps
// in custody-system/custody-hub-identity: workloadv1alpha1.ReadHubIdentity) goes into every
// downstream name the syncer makes up, so that two hubs never collide in one member. The
// syncer reads it once, at start, and confirms it again before it removes or unfences
// anything in the member (syncio.HubCheck): a hub wiped under it, or any other hub, has
// another identity, and what its empty caches would have the syncer remove stays; a hub an
// import is still restoring has its identity marked so (workloadv1alpha1.HubRestoringAnnotation),
// and nothing is removed before the import completes.
package syncer
