// Package dr is the hub's LocationPair controller. For each pair it reads the two Locations,
// their targets and Fences, the volumes of the namespaces their Placements bind and the
// pair's VolumeReplications, hands them to the pure decision (package coordination/dr), and
// writes what it says: the pair's status first (the active Location and the action under
// way, so that a restarted controller goes on from there), then the restore-from annotations
// of the claims a switch restores (before anything else: the decision makes the Location
// switched to active, which their namespaces follow at once, only once it sees every claim
// asked), then the pair's rsync-TLS key, the
// Fences a failover asks for, a VolumeReplication per replicated volume (labelled Sync for
// its source and destination, whose syncers carry it out with VolSync), and the latest
// replica of each volume on its VolumeOwnership.
//
// Two pairs that share a Location both say so in their LocationsExclusive condition, each
// naming the other. Only the one made first is acted on: the other is Pending, and nothing
// of it is decided or written but that condition, until the first is deleted.
//
// The package's DrillReconciler runs Drills: it reads the drill's pair and volumes as the
// pair's controller does, hands them to coordination/dr's DecideDrill, and makes what the
// decision asks: a sandbox namespace per namespace of the pair, isolated by a NetworkPolicy,
// with copies of its objects and its claims (each annotated to be restored from the replica
// picked), bound to the other Location by a Placement of the drill's own. A deleted drill's
// sandboxes, then its Placement, are deleted before its finalizer goes. The pair's controller
// records each drill that was ready, or ended before, in the pair's history.
package dr
