package coordination

import (
	"slices"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// Transitions lists, for each phase, the phases a volume may go to next. A phase may always
// stay as it is. The empty phase is a volume never seen before.
var Transitions = map[storagev1alpha1.VolumePhase][]storagev1alpha1.VolumePhase{
	"":                           {storagev1alpha1.Pending, storagev1alpha1.Provisioning, storagev1alpha1.Deleting},
	storagev1alpha1.Pending:      {storagev1alpha1.Provisioning, storagev1alpha1.Deleting},
	storagev1alpha1.Provisioning: {storagev1alpha1.Pending, storagev1alpha1.Upsyncing, storagev1alpha1.Deleting},
	storagev1alpha1.Upsyncing:    {storagev1alpha1.Bound, storagev1alpha1.Moving, storagev1alpha1.Deleting},
	storagev1alpha1.Bound:        {storagev1alpha1.Moving, storagev1alpha1.Deleting},
	storagev1alpha1.Moving:       {storagev1alpha1.Bound, storagev1alpha1.Deleting},
	storagev1alpha1.Deleting:     {storagev1alpha1.Released},
	storagev1alpha1.Released:     {},
}

// Allowed tells whether a volume may go from one phase to the other.
func Allowed(from, to storagev1alpha1.VolumePhase) bool {
	return from == to || slices.Contains(Transitions[from], to)
}
