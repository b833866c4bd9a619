// Package placement holds the placement controller: for each Placement it selects one
// Location, binds the namespaces its selector matches by listing the Placement in their
// scheduling.custody.dev/placement annotation, and reports the phase (Pending, Unbound, Bound)
// and the Ready, SpecValid, NamespacesAllowed and TargetsAvailable conditions.
//
// No Placement ever takes a namespace of Kubernetes (kube-*) or of Custody (custody-*, the
// heartbeat Leases' namespace), however wide its selector: placing one would copy the hub's
// own objects and Custody's identities into a member. The NamespacesAllowed condition names
// those a selector matched, and one bound before is unbound.
//
// The choice of a Location is stable: a selected Location is kept while it exists and still
// matches the spec. Bad input (a selector that does not parse, a Location or target that does
// not exist, restricted targets the Placement does not name) gets a condition and an event,
// and leaves every binding as it was. Which target of the Location each namespace runs on is
// the scheduler's decision (package scheduler).
package placement
