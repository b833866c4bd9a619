// Package heartbeat is the syncer's heartbeat and its report of the member to its own
// SyncTarget. The Renewer renews the target's heartbeat Lease on the hub once per period, as
// long as the member answers (creating the Lease, and its namespace, when missing): one write
// per period, as a node's Lease, which no report holds up. The Reconciler reports into the
// SyncTarget's status, when it changed, the member's StorageClasses, the resource types the
// syncer syncs, the clients the member's storage reports of it for the target's
// NetworkFenceClass (csi-addons' CSIAddonsNode status, against which the hub checks the
// target's node CIDRs), and per storage domain whether the member is clean: whether it holds no claim
// or PV, made or upsynced by the syncer, that the hub no longer gives the target (a fenced
// target is unfenced only on a clean report). Each report, once its conditions are in the
// status, goes into the Lease with the next renewal (workloadv1alpha1.CleanReportAnnotation),
// with the time it began: the hub acts on a clean status only with a report that says the same
// and is newer than what it waits for, so a target back from a loss is judged on what its
// syncer found since, not on its status of before
// (workloadv1alpha1.SyncTarget.CleanReportedAt). The report covers every domain of the
// target's spec and of the member's classes, and errs towards not clean: which domains a held
// object counts against is decided by fencing.Unclean, and one whose class does not tell its
// domain for sure (missing, without the domain annotation, of another provisioner) counts
// against all of them. It writes those status fields only, with server-side apply under the
// syncer's field manager, so that the fields the hub's health controller writes (key, Ready)
// are never overwritten.
package heartbeat
