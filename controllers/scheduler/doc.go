// Package scheduler holds the scheduler controller: for each namespace and each Location its
// Placements selected, it chooses one SyncTarget of that Location and writes the choice on
// the namespace as the state label state.workload.custody.dev/<key>=Sync. A target the
// namespace leaves gets the deletion.internal.workload.custody.dev/<key> annotation instead,
// which starts the removal flow that the syncer carries out.
//
// The choice (schedule.go, pure and table-tested) filters the targets (Ready, not cordoned,
// not fenced, not evicting, reaching the storage domains of the namespace's volumes,
// restricted only when the Placement names them), scores them by priority ÷ (namespaces
// placed + 1) with ties broken by name, and is stable: a placed namespace stays where it is
// unless its target becomes ineligible or its Placement changes. A target that is cordoned,
// fenced or not Ready keeps its namespaces while no other target can take them, so that a
// Location of one member, or an outage of the hub that leaves every target Unreachable at
// once, moves nothing; and with nowhere else to go, a target a namespace is leaving takes it
// back. A target that stopped answering (Unreachable) keeps its namespaces until it has been
// so for its fence delay (fencing.Delay), the moment its owned volumes may be fenced and
// moved: a heartbeat missed under load, or a network that drops for a few seconds, moves no
// workload; the namespace is chosen again when the delay runs out. A fenced target takes no
// namespace until its Fence is lifted, Unfencing included: its member may still be cut off
// the storage.
//
// Each choice counts the loads of its Locations' targets from the cache's index of the
// namespaces by target: it reads the namespaces of the targets it chooses among, not every
// namespace of the hub, so that placing n namespaces over a hub of many Locations does not
// cost n² reads of the cache.
package scheduler
