package fencing

import (
	"testing"
	"time"
)

func TestLost(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	for _, tt := range []struct {
		name  string
		since time.Time
		delay time.Duration
		want  bool
	}{
		{name: "reachable", delay: time.Second, want: false},
		{name: "unreachable for less than the delay", since: now.Add(-29 * time.Second), delay: 30 * time.Second, want: false},
		{name: "unreachable for exactly the delay", since: now.Add(-30 * time.Second), delay: 30 * time.Second, want: true},
		{name: "unreachable for longer", since: now.Add(-time.Hour), delay: 30 * time.Second, want: true},
		{name: "no delay: lost as soon as unreachable", since: now, want: true},
	} {
		if got := Lost(tt.since, now, tt.delay); got != tt.want {
			t.Errorf("%s: Lost = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHolds(t *testing.T) {
	for s, want := range map[State]bool{Unfenced: false, Fencing: false, Fenced: true, Failed: false} {
		if got := s.Holds(); got != want {
			t.Errorf("%q.Holds() = %v, want %v", s, got, want)
		}
	}
}
