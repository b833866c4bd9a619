package v1alpha1

import "k8s.io/apimachinery/pkg/types"

// The volume half of the protocol on hub objects. When a member provisions the PV of a claim
// it was given, its syncer upsyncs that PV to the hub:
//
//	name                         UpsyncedPVName(hub PVC UID): pvc-<uid>, as a single cluster names
//	                             the PV it provisions for a claim
//	state.workload.custody.dev/<t>   Upsync
//	pv.workload.custody.dev/<t>      the PV's name in <t>'s member
//	spec.claimRef                the hub PVC's namespace and name, without uid
//
// Every other member gets the hub PV under a translated name. Target <t> keeps its own name
// for it: when coordination switches the label to Sync, <t>'s syncer finds the PV named by
// pv.workload.custody.dev/<t> and takes it over in place, so the member's claim stays Bound.
const PVNameAnnotationPrefix = "pv.workload.custody.dev/"

// PVNameAnnotation is the annotation key that names a hub PV's counterpart in a target's
// member, for a target key.
func PVNameAnnotation(key string) string { return PVNameAnnotationPrefix + key }

// UpsyncedPVName is the name of the hub PV upsynced for the hub PVC with the given UID.
func UpsyncedPVName(claimUID types.UID) string { return "pvc-" + string(claimUID) }
