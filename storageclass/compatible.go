package storageclass

import (
	"strings"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Compatible tells whether a volume of a class may move from the target where the class is
// from to the target where it is to; a nil class is one the target does not report. The move
// is refused when the class is missing on either side (without the class on the source there
// is nothing to check the target against) or differs in provisioner, parameters or domain.
// Differences in the other fields never refuse a move.
//
// reason is a sentence that names the class and each difference with the values on "the
// source" and "the target", for a VolumeOwnership's message; its reason word is
// StorageClassMissing when from or to is nil, StorageClassMismatch otherwise.
func Compatible(from, to *workloadv1alpha1.StorageClassInfo) (ok bool, reason string) {
	if from == nil && to == nil {
		return false, "the class is reported by neither the source nor the target"
	}
	refusals := Compare([]Target{side("the source", from), side("the target", to)}).Refusals()
	return len(refusals) == 0, strings.Join(refusals, "; ")
}

func side(name string, c *workloadv1alpha1.StorageClassInfo) Target {
	if c == nil {
		return Target{Name: name}
	}
	return Target{Name: name, Classes: []workloadv1alpha1.StorageClassInfo{*c}}
}
