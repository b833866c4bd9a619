// Package heartbeat is the syncer's controller for its own SyncTarget. It renews the
// target's heartbeat Lease on the hub once per period, as long as the member answers
// (creating the Lease, and its namespace, when missing), and reports into the SyncTarget's
// status the member's StorageClasses, the resource types the syncer syncs, and per storage
// domain whether the member is clean: whether it holds no claim or PV, made or upsynced by
// the syncer, that the hub no longer gives the target (a fenced target is unfenced only on a
// clean report). The report covers every domain of the target's spec and of the member's
// classes, and errs towards not clean: which domains a held object counts against is decided
// by fencing.Unclean, and one whose class does not tell its domain for sure (missing, without
// the domain annotation, of another provisioner) counts against all of them. It writes those
// status fields only, with server-side apply under the syncer's field manager, so that the
// fields the hub's health controller writes (key, Ready, lastHeartbeatTime) are never
// overwritten.
package heartbeat
