// Package dr is the hub's LocationPair controller. For each pair it reads the two Locations,
// their targets and Fences, the volumes of the namespaces their Placements bind and the
// pair's VolumeReplications, hands them to the pure decision (package coordination/dr), and
// writes what it says: the pair's status first (the active Location and the action under
// way, so that a restarted controller goes on from there), then the pair's rsync-TLS key, the
// Fences a failover asks for, a VolumeReplication per replicated volume (labelled Sync for
// its source and destination, whose syncers carry it out with VolSync), and the latest
// replica of each volume on its VolumeOwnership.
//
// Two pairs that share a Location both say so in their LocationsExclusive condition, each
// naming the other. Only the one made first is acted on: the other is Pending, and nothing
// of it is decided or written but that condition, until the first is deleted.
package dr
