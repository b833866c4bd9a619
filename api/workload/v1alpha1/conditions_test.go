package v1alpha1

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTargetStanding(t *testing.T) {
	since := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	ready := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionTrue, Reason: ReasonHeartbeating, LastTransitionTime: since}
	unreachable := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonUnreachable, LastTransitionTime: since}
	neverSeen := metav1.Condition{Type: ConditionReady, Status: metav1.ConditionFalse, Reason: ReasonNeverSeen, LastTransitionTime: since}
	now := metav1.Now()
	tests := []struct {
		name                        string
		t                           SyncTarget
		ready, departing, available bool
		unreachable                 bool
	}{
		{name: "Ready", t: SyncTarget{Status: SyncTargetStatus{Conditions: []metav1.Condition{ready}}}, ready: true, available: true},
		{name: "no condition yet", t: SyncTarget{}},
		{name: "Unreachable", t: SyncTarget{Status: SyncTargetStatus{Conditions: []metav1.Condition{unreachable}}}, unreachable: true},
		{name: "never seen: not Ready, but not unreachable since any time", t: SyncTarget{Status: SyncTargetStatus{Conditions: []metav1.Condition{neverSeen}}}},
		{name: "cordoned", t: SyncTarget{Spec: SyncTargetSpec{Unschedulable: true}, Status: SyncTargetStatus{Conditions: []metav1.Condition{ready}}}, ready: true},
		{name: "evicting", t: SyncTarget{Spec: SyncTargetSpec{Evict: true}, Status: SyncTargetStatus{Conditions: []metav1.Condition{ready}}}, ready: true, departing: true},
		{name: "being deleted", t: SyncTarget{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: SyncTargetStatus{Conditions: []metav1.Condition{ready}}}, ready: true, departing: true},
	}
	for _, tt := range tests {
		if got := tt.t.IsReady(); got != tt.ready {
			t.Errorf("%s: IsReady = %v", tt.name, got)
		}
		if got := tt.t.Departing(); got != tt.departing {
			t.Errorf("%s: Departing = %v", tt.name, got)
		}
		if got := tt.t.Available(); got != tt.available {
			t.Errorf("%s: Available = %v", tt.name, got)
		}
		if got := tt.t.UnreachableSince(); got.IsZero() == tt.unreachable || (tt.unreachable && !got.Equal(since.Time)) {
			t.Errorf("%s: UnreachableSince = %v", tt.name, got)
		}
		if got := tt.t.ReadySince(); got.IsZero() == tt.ready || (tt.ready && !got.Equal(since.Time)) {
			t.Errorf("%s: ReadySince = %v", tt.name, got)
		}
	}
}
