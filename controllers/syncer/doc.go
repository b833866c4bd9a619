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
// The hub's identity (the UID of its kube-system namespace) goes into every downstream name
// the syncer makes up, so that two hubs never collide in one member.
package syncer
