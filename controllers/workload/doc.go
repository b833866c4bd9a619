// Package workload holds the workload controller: it copies a namespace's state labels and
// deletion annotations onto the resources inside it, for each synced resource type, so that
// each target's syncer sees the objects it must sync and the removals it must carry out.
//
// A StatefulSet gets the state label with the empty value ("placed, waiting"): the
// statefulset controller turns it to Sync on a target once the claims of its
// volumeClaimTemplates are there. A PersistentVolumeClaim follows its namespace the same way
// (workloadv1alpha1.Propagate, with the empty value), but in the coordination controller, which decides when
// and on which target it turns to Sync and writes the placement with the step the claim
// takes. The controller only adds; removing state labels is the syncers' part of the
// deletion flow.
package workload
