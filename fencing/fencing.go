package fencing

import "time"

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
)

// Holds tells whether the state cuts the target off its storage: only a confirmed Fence does.
func (s State) Holds() bool { return s == Fenced }

// Lost tells whether a target Unreachable since since has been so for at least delay at now.
// A zero since means the target is reachable.
func Lost(since, now time.Time, delay time.Duration) bool {
	return !since.IsZero() && now.Sub(since) >= delay
}
