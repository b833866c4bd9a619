// Package coordination holds the coordination controller: for every hub PersistentVolumeClaim
// placed on a target it reads the claim, its hub PV, the SyncTargets and the claim's
// VolumeOwnership, asks package coordination for the next step, writes the decision on the
// VolumeOwnership, then carries out the step's writes on the claim and the PV. Each step is
// one reconcile; the syncers' work shows up as label changes that trigger the next one.
//
// A step's patches of the claim and the PV trigger the next step, whose cache may show one of
// them already and the other not yet: decided from the version a patch replaced, that step
// would make the patch again, and the API server would refuse it as a conflict. A reconcile
// whose cache still holds a version its last write replaced does nothing (versions.Replaced):
// the write's own event brings the claim back.
//
// The claim follows its namespace's placement here (workloadv1alpha1.Propagate): a step reads the
// namespace, decides on the claim as it follows it, and writes the placement in the claim's
// patch, so that a move costs no write of the placement of its own.
//
// It also exposes the volume metrics: volumes by class and phase, moves started, completed
// and refused, and how long moves take.
package coordination
