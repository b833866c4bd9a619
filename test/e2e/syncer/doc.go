// Package syncer holds the multi-cluster suite of the syncer and the hub's health
// controller: one bed (a hub and members m1 and m2 with their own PV binders, sharing the
// simulated storage domain "shared"), a syncer per member running with exactly the RBAC of
// config/, and the health controller on the hub. Each spec works in hub namespaces of
// its own and sets the state labels on hub objects by hand, as the placement and
// coordination controllers will. It also holds the syncer's benchmark.
package syncer
