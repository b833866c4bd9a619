// Package scheduling tests the hub controllers (placement, location, scheduler, workload)
// on a real hub API server: every Placement phase, reselection, target loss, cordon and
// evict, restricted targets, storage domains, and bad input.
package scheduling
