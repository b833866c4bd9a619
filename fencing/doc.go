// Package fencing holds the pure decisions about cutting a lost target off a storage domain,
// as the storage's fencing does (a csi-addons NetworkFence, or an admin's statement that the
// member is powered off). It imports no API client: the controllers (health, scheduler,
// coordination, fencing, dr) read the world, ask this package, and write what it says.
//
// When a target is lost has its one home here: after how long unrenewed a heartbeat Lease
// makes its target Unreachable (Grace), how long an Unreachable target has before it is lost
// (Delay: its own spec.fenceDelay, the controller's flag, or three graces), and whether and
// in how long it is lost at a moment (Lost, LostIn). The health controller, the scheduler and
// coordination all read these.
//
// Coordination asks two more questions of it for an owned volume whose owner stopped
// answering: where does a Fence of the owner stand (State), and does a mass failure hold
// automatic fencing back (Brake: more than a share of the hub's targets Unreachable at once;
// DR asks it too before a pair fails over by itself).
// Only a Fence that reached Fenced lets the volume move without the owner's acknowledgement
// (invariant 2).
//
// A Fence is lifted once the fenced member reports each of its domains clean; Unclean decides
// which domains an object the member still holds counts against, conservatively: one it cannot
// place in a domain counts against every domain it could be in. Overlaps finds targets of a
// domain whose node CIDRs overlap, so that a NetworkFence of one would cut off the other;
// VerifyNodeCIDRs compares a target's node CIDRs with the clients the storage reports of its
// member (csi-addons' GetFenceClients), so that a Fence that would miss a client, or fence
// CIDRs the storage does not know, is told before it is needed.
package fencing
