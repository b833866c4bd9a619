// Package fencing holds the pure decisions about cutting a lost target off a storage domain,
// as the storage's fencing does (a csi-addons NetworkFence, or an admin's statement that the
// member is powered off). It imports no API client: the coordination and fencing controllers
// read the world, ask this package, and write what it says.
//
// Coordination asks two questions of it for an owned volume whose owner stopped answering:
// has the owner been lost long enough to fence it (Lost), and where does a Fence of the owner
// stand (State). Only a Fence that reached Fenced lets the volume move without the owner's
// acknowledgement (invariant 2).
//
// A Fence is lifted once the fenced member reports each of its domains clean; Unclean decides
// which domains an object the member still holds counts against, conservatively: one it cannot
// place in a domain counts against every domain it could be in. Overlaps finds targets of a
// domain whose node CIDRs overlap, so that a NetworkFence of one would cut off the other.
package fencing
