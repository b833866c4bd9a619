package fencing

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// TestWhenLost is the one table of when a target is lost: its fence delay from its spec, the
// controller's flags or its heartbeat Lease, and whether and when it is lost at a moment.
func TestWhenLost(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	leaseOf := func(seconds int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To(seconds)}}
	}
	for _, tt := range []struct {
		name string
		// own is the target's spec.fenceDelay; delay and grace the controller's flags.
		own          *metav1.Duration
		delay, grace time.Duration
		lease        *coordinationv1.Lease
		// unreachable is how long the target has been Unreachable; zero: it answers.
		unreachable time.Duration
		wantDelay   time.Duration
		wantLost    bool
		wantIn      time.Duration
	}{
		{name: "answers", delay: 30 * time.Second, wantDelay: 30 * time.Second},
		{name: "unreachable for less than the delay", delay: 30 * time.Second, unreachable: 29 * time.Second,
			wantDelay: 30 * time.Second, wantIn: time.Second},
		{name: "unreachable for exactly the delay", delay: 30 * time.Second, unreachable: 30 * time.Second, wantDelay: 30 * time.Second, wantLost: true},
		{name: "unreachable for longer", delay: 30 * time.Second, unreachable: time.Hour, wantDelay: 30 * time.Second, wantLost: true},
		{name: "the target's own delay first", own: &metav1.Duration{Duration: 5 * time.Second}, delay: 30 * time.Second, unreachable: 4 * time.Second,
			wantDelay: 5 * time.Second, wantIn: time.Second},
		{name: "a zero delay of its own: lost as soon as unreachable", own: &metav1.Duration{}, delay: 30 * time.Second, unreachable: time.Millisecond,
			wantLost: true},
		{name: "no delay flag: three configured graces", grace: 2 * time.Second, lease: leaseOf(10), unreachable: 5 * time.Second,
			wantDelay: 6 * time.Second, wantIn: time.Second},
		{name: "no flags: three graces of three periods the Lease announces", lease: leaseOf(1), unreachable: 9 * time.Second,
			wantDelay: 9 * time.Second, wantLost: true},
		{name: "no flags, no Lease: the default period", unreachable: time.Minute,
			wantDelay: 9 * DefaultHeartbeatPeriod, wantIn: 9*DefaultHeartbeatPeriod - time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			target := &workloadv1alpha1.SyncTarget{Spec: workloadv1alpha1.SyncTargetSpec{FenceDelay: tt.own}}
			var since time.Time
			if tt.unreachable > 0 {
				since = now.Add(-tt.unreachable)
			}
			delay := Delay(target, tt.delay, tt.grace, tt.lease)
			if delay != tt.wantDelay {
				t.Fatalf("Delay = %s, want %s", delay, tt.wantDelay)
			}
			if got := Lost(since, now, delay); got != tt.wantLost {
				t.Errorf("Lost = %v, want %v", got, tt.wantLost)
			}
			if got := LostIn(since, now, delay); got != tt.wantIn {
				t.Errorf("LostIn = %s, want %s", got, tt.wantIn)
			}
		})
	}
}

func TestBrake(t *testing.T) {
	for _, tt := range []struct {
		name        string
		brake       Brake
		lost, total int
		want        bool
	}{
		{"more than the share of enough targets", DefaultBrake, 6, 10, true},
		{"exactly the share does not", Brake{Share: 0.5, MinTargets: 10}, 5, 10, false},
		{"no more than the share", DefaultBrake, 5, 10, false},
		{"too few targets to count: a Location of a pair", DefaultBrake, 2, 4, false},
		{"all of a small hub", DefaultBrake, 9, 9, false},
		{"a thousand targets, 551 lost", DefaultBrake, 551, 1000, true},
		{"turned off", Brake{}, 10, 10, false},
	} {
		if got := tt.brake.Engaged(tt.lost, tt.total); got != tt.want {
			t.Errorf("%s: Engaged(%d, %d) = %v, want %v", tt.name, tt.lost, tt.total, got, tt.want)
		}
	}
}
