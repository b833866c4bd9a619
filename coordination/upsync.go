package coordination

import (
	"k8s.io/apimachinery/pkg/types"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// ProvisionedFor tells whether a hub PV that a target upsynced, and that the claim names or
// whose claimRef names the claim, may become the claim's volume: only the PV that the target's syncer upsynced for
// this very claim (its name is derived from the claim's UID, which a claim made again under
// the name does not share) while the claim is placed on that target and its copy there asks
// for a volume. A syncer may create any PV labelled Upsync for its own target, naming any
// claim: binding such a PV by the claimRef's name alone would hand another namespace's claim
// a volume of the member's choosing. A PV that no target upsynced (an admin's) is not
// judged here.
func ProvisionedFor(claimUID types.UID, claim Claim, pvName string, pv map[string]Presence) bool {
	for key, p := range pv {
		if p.State != workloadv1alpha1.ResourceStateUpsync {
			continue
		}
		on, placed := claim.On[key]
		return pvName == workloadv1alpha1.UpsyncedPVName(claimUID) && (claim.VolumeName == "" || claim.VolumeName == pvName) &&
			placed && on.Synced() && !on.Leaving
	}
	return true
}

// VolumeFor tells whether a hub PV that the claim names, or whose claimRef names it, is the
// claim's volume: while the claim lives, one that ProvisionedFor allows; once it is being
// deleted, also the one a target upsynced for this very claim, wherever the claim is placed
// by then. Its storage is the claim's to release or keep: a claim that moved on while its
// volume was being upsynced must not finish without it, and leave the storage to no one.
func VolumeFor(claimUID types.UID, claim Claim, deleting bool, pvName string, pv map[string]Presence) bool {
	return deleting && pvName == workloadv1alpha1.UpsyncedPVName(claimUID) || ProvisionedFor(claimUID, claim, pvName, pv)
}
