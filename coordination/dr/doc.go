// Package dr holds the pure decisions of disaster recovery between the two Locations of a
// LocationPair. It imports no API client: the dr controller reads the pair, the health of its
// Locations' targets, their Fences and every replicated volume, hands them to Decide as an
// Observation, and writes what the Decision says.
//
// While the pair protects, the volume of every claim whose namespace runs in the active
// Location replicates from its owner to one target of the other Location, the same target
// for every claim of a namespace (Destination), on a cron schedule made from the pair's
// interval (Schedule), as VolSync's rsync-TLS mover with the snapshot copy method does. A
// target that a Fence holds takes no replica: its namespaces replicate to another target of
// its Location until its Fence is lifted.
//
// A switch of the active Location is an action with named steps (PairAction.Progression,
// whose values the scheduling API names), recorded in the pair's status before it takes
// effect, so that a controller restarted at any step goes on from there. The changes of
// progression a decision may make are data (Transitions); one decision carries an action on
// through as many of them as what it observes allows:
//
//   - Failover, automatic once every target of the active Location has been Unreachable for
//     the pair's threshold and the other Location holds a replica of every volume bound
//     there, or declared, to a Location with a target that answers and that no Fence holds:
//     the active Location's targets that still answer are fenced first, and the
//     destinations keep their images from VolSync's rotation until the failover completed
//     (Fencing); then each claim is asked to restore from its latest replica in the other
//     Location, which becomes active once every claim is seen asked (Restoring): the
//     namespaces follow the active Location, and a claim whose namespace went first would
//     start a move there; once every claim that has a replica is bound there,
//     the workloads start there (Starting), and the failover is Completed once every
//     Deployment and StatefulSet of the pair's namespaces reports its replicas ready
//     (serving.go).
//   - Relocate, declared and lossless: the workloads stop at the active Location and the
//     syncs leave their schedule, each after one more sync on a manual trigger, as Ramen's
//     final sync does (Quiescing); a last sync then runs on another manual trigger and its
//     snapshots become ready (FinalSync), then the claims are asked to restore from those
//     snapshots and the other Location becomes active (Restoring), and the workloads start there
//     (Starting), as a failover's do. The last sync is asked for a few
//     seconds after the one before completed: the API keeps times to the second, and the
//     destination's report of the last sync must be told apart from the one before.
//
// A claim is restored only from a replica in the Location switched to, and only when its
// volume is not there already: one that stayed there with no replica as a switch went away,
// and was written to since, keeps its volume, as any replica there is older than what it
// holds. A claim of the Location left with no replica is told so (an empty restore-from
// annotation) and waits there rather than start empty. What a switch writes on the claims
// follows from what is observed, not from the step taken: the pair's status is written
// before the claims, and the decisions after a switch completed write again what a restart
// in between kept from being written.
//
// A claim labelled out of the pair's protection (storagev1alpha1.ProtectLabel) is observed
// apart (Observation.Unprotected): it has no replication, counts in no condition but its own
// Replicated (NotProtected), and a switch only tells it that it was left, as one with no
// replica is.
//
// The pair's storage class map (Pair.Classes) names classes that are the same storage under
// another name at the other Location. A volume's class is the one it has where it runs: the
// claim's storage-class annotation, else the class it names. A volume replicates into the class
// its own maps to at the destination's Location (Want.Class, unset where the name is the same),
// and a switch restores it in that class, writing it as the claim's storage-class annotation
// with the restore-from (Decision.Classes), or taking the annotation off where the class is the
// one the claim names. The map is read from the class the volume has, so one that swaps two
// names maps each way back.
//
// A declared switch is a spec whose generation is newer than the one the last action
// answered, so that a failover the pair made on its own is not undone by an activeLocation
// set before it. Replication runs the other way, to each target of the old Location as it is
// back, clean and unfenced; PeerReady once none is fenced.
//
// Each action records what triggered it and when (the loss, from the last of the Location's
// targets to stop heartbeating, or the declaration), and each step it reached with
// its time. The decision that ends it (Completed or CalledOff) adds it to the pair's history,
// the last HistoryLength kept; one that completes measures it: the recovery time from its
// trigger to every volume with a replica bound, the recovery point (for a failover, the
// trigger less the oldest replica restored from), and the volumes restored, set aside and left
// waiting (history.go).
//
// A Drill rehearses a failover without a switch (DecideDrill, drill.go): it starts once its
// pair has an active Location, no switch under way and no older drill, picks for each volume
// the latest ready image at the other Location (the data window is the start less the oldest
// picked), asks for each claim's copy in a sandbox restored from it (the restore-from names
// the replica's namespace: <target>/<namespace>/<snapshot>), and is Ready once every copy is
// bound and every workload of the sandboxes ready (its RTO). The pair records each drill
// that was ready, or ended before, in its history (DrillRecord, Decision.recordDrills).
//
// The files follow these seams: protection.go (replication while the pair protects, and
// DataProtected), failover.go (when a switch starts, and the Fencing step), relocate.go
// (Quiescing and FinalSync, and a relocate given up for a failover), return.go (Restoring at
// the Location switched to, and the Fences the Location left keeps until it returns clean),
// beside Decide and the order of the steps (decide.go), the Transitions (progressions.go), the
// pair's conditions (conditions.go), what a pair's Locations tell (locations.go), and drills
// (drill.go).
package dr
