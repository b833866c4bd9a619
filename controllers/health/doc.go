// Package health is the hub's controller of SyncTarget health. It reads the heartbeat Lease
// each syncer renews on the hub (see workloadv1alpha1.HeartbeatNamespace) and sets the
// SyncTarget's Ready condition: True (Heartbeating) while the Lease was renewed within the
// grace period, False (Unreachable) once it was not, False (NeverSeen) when no syncer ever
// renewed one. It also sets the target key and the last heartbeat time, emits an event on
// every change of Ready, and checks again exactly when the grace period would run out, so
// that it never polls the targets. The scheduler and coordination read the Ready it writes.
//
// A syncer cannot renew its Lease while the hub's API server does not answer, so a heartbeat
// missed then says nothing of its target. The controller asks the hub, past its cache, every
// second whether it answers; a Ready target stays Ready while the hub does not answer the
// controller, and until the grace ran out from the moment it answered again (after the
// controller starts, too). A target already Unreachable stays so until its syncer renews the
// Lease.
package health
