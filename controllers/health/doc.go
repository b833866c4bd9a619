// Package health is the hub's controller of SyncTarget health. It reads the heartbeat Lease
// each syncer renews on the hub (see workloadv1alpha1.HeartbeatNamespace) and sets the
// SyncTarget's Ready condition: True (Heartbeating) while the Lease was renewed within the
// grace period, False (Unreachable) once it was not, False (NeverSeen) when no syncer ever
// renewed one. It also sets the target key, emits an event on every change of Ready, and
// checks again exactly when the grace period would run out, so that it never polls the
// targets. The scheduler and coordination read the Ready it writes. As with a node's Lease,
// a heartbeat writes nothing but the Lease: the status changes only when Ready does, and
// whoever needs the time of the last heartbeat reads the Lease (Lease).
//
// A syncer cannot renew its Lease while the hub's API server does not answer, so a heartbeat
// missed then says nothing of its target. The controller asks the hub, past its cache, every
// second (or a third of a shorter grace) whether it answers. A Ready target stays Ready while
// the hub does not answer the controller, and until the grace has run out since it answers
// again; when the controller starts, it judges no target before it first asked the hub. A
// Ready target turns Unreachable only on the Lease as the hub has it, read past the cache,
// which may lag after an outage. A target already Unreachable stays so until its syncer
// renews the Lease.
package health
