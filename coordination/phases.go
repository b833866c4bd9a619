package coordination

import (
	"slices"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// Transition is one allowed change of phase, named after the case of Decide that takes it.
type Transition struct {
	From, To storagev1alpha1.VolumePhase
	Name     string
}

// Transitions lists every change of phase a volume may take. A phase may always stay as it
// is. The empty phase is a volume never seen before.
var Transitions = []Transition{
	{"", storagev1alpha1.Pending, "waitForPlacement"},
	{"", storagev1alpha1.Provisioning, "provision"},
	{"", storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Pending, storagev1alpha1.Provisioning, "provision"},
	{storagev1alpha1.Pending, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Provisioning, storagev1alpha1.Pending, "provisioningTargetGone"},
	{storagev1alpha1.Provisioning, storagev1alpha1.Upsyncing, "bind"},
	{storagev1alpha1.Provisioning, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Upsyncing, storagev1alpha1.Bound, "own"},
	{storagev1alpha1.Upsyncing, storagev1alpha1.Moving, "depart"},
	{storagev1alpha1.Upsyncing, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Bound, storagev1alpha1.Moving, "depart"},
	{storagev1alpha1.Bound, storagev1alpha1.Moving, "ownerLost"},
	{storagev1alpha1.Bound, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Moving, storagev1alpha1.Bound, "moved"},
	{storagev1alpha1.Moving, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Bound, storagev1alpha1.Restoring, "setAside"},
	{storagev1alpha1.Moving, storagev1alpha1.Restoring, "setAside"},
	{storagev1alpha1.Bound, storagev1alpha1.Pending, "noReplica"},
	{storagev1alpha1.Moving, storagev1alpha1.Pending, "noReplica"},
	{"", storagev1alpha1.Restoring, "restore"},
	{storagev1alpha1.Pending, storagev1alpha1.Restoring, "restore"},
	{storagev1alpha1.Provisioning, storagev1alpha1.Restoring, "restore"},
	{storagev1alpha1.Upsyncing, storagev1alpha1.Restoring, "setAside"},
	{storagev1alpha1.Restoring, storagev1alpha1.Upsyncing, "bind"},
	{storagev1alpha1.Restoring, storagev1alpha1.Deleting, "delete"},
	{storagev1alpha1.Deleting, storagev1alpha1.Released, "released"},
	{storagev1alpha1.Deleting, storagev1alpha1.Released, "retain"},
}

// Allowed tells whether a volume may go from one phase to the other.
func Allowed(from, to storagev1alpha1.VolumePhase) bool {
	return from == to || slices.ContainsFunc(Transitions, func(t Transition) bool { return t.From == from && t.To == to })
}
