// Package health is the hub's controller of SyncTarget health. It reads the heartbeat Lease
// each syncer renews on the hub (see workloadv1alpha1.HeartbeatNamespace) and sets the
// SyncTarget's Ready condition: True (Heartbeating) while the Lease was renewed within the
// grace period, False (Unreachable) once it was not, False (NeverSeen) when no syncer ever
// renewed one. It also sets the target key and the last heartbeat time, emits an event on
// every change of Ready, and checks again exactly when the grace period would run out, so
// that it never polls. The scheduler and coordination read the Ready it writes.
package health
