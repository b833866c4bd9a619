// Package workload holds the workload controller: it copies a namespace's state labels and
// deletion annotations onto the resources inside it, for each synced resource type, so that
// each target's syncer sees the objects it must sync and the removals it must carry out.
//
// A PersistentVolumeClaim gets the state label with the empty value ("placed, waiting for
// coordination"): the coordination controller decides when, and on which target, it turns
// to Sync. So does a StatefulSet, which the statefulset controller turns to Sync on a target
// once the claims of its volumeClaimTemplates are there. The controller only adds; removing
// state labels is the syncers' part of the deletion flow.
package workload
