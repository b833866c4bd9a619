package fencing

import "testing"

func TestHolds(t *testing.T) {
	for s, want := range map[State]bool{Unfenced: false, Fencing: false, Fenced: true, Failed: false} {
		if got := s.Holds(); got != want {
			t.Errorf("%q.Holds() = %v, want %v", s, got, want)
		}
	}
}
