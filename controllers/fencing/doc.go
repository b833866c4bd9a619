// Package fencing runs the hub's Fence controller: for each Fence it picks the executor (a
// Ready target of the storage domain, never the fenced one), labels the Fence for that
// target's syncer, which executes it as a csi-addons NetworkFence in its member, and turns
// what the executor reports into the Fence's phase. It lifts a Fence only once the fenced
// target is back and reported clean after the unfence was asked (the Fence's
// unfenceRequestedTime), and keeps each SyncTarget's Fenced condition. The decisions are
// package fencing's (the top-level one); this package reads and writes.
//
// Beside it, a second controller keeps each fencing SyncTarget's NodeCIDRsExclusive
// condition, False while a node CIDR of it overlaps one of another target of a storage
// domain they share, naming both: a Fence of either would cut off the other too.
//
// The same controller keeps their FencingVerified condition: the node CIDRs against the
// clients the member's storage reports of it (csi-addons' GetFenceClients, reported by the
// target's syncer), checked when the target joins and whenever either changes. False names
// the node CIDRs that match no client and the clients no node CIDR covers, with a warning
// event; coordination then asks for no Fence of the target on its own.
package fencing
