package fencing

import (
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// State is where a Fence of a target in a storage domain stands, as coordination reads it.
type State string

const (
	// Unfenced: no Fence holds the target off the domain.
	Unfenced State = ""
	// Fencing: a Fence was asked for and the storage has not confirmed it yet.
	Fencing State = "Fencing"
	// Fenced: the storage confirmed that the target can no longer reach the domain.
	Fenced State = "Fenced"
	// Failed: the storage refused or failed the Fence; it is retried.
	Failed State = "Failed"
	// Unfencing: the Fence is being lifted; it no longer lets a volume leave its target,
	// and no new Fence can be asked for until it is gone.
	Unfencing State = "Unfencing"
)

// Of is where the Fence f stands for coordination; nil means there is none.
func Of(f *storagev1alpha1.Fence) State {
	switch {
	case f == nil:
		return Unfenced
	case f.Lifting():
		return Unfencing
	case f.Holds():
		return Fenced
	case f.Status.Phase == storagev1alpha1.FenceFailed:
		return Failed
	}
	return Fencing
}

// Holds tells whether the state cuts the target off its storage: only a confirmed Fence does.
func (s State) Holds() bool { return s == Fenced }
