package v1alpha1

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
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

func TestCleanReportedAt(t *testing.T) {
	reported := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lease := func(annotation string) *coordinationv1.Lease {
		l := &coordinationv1.Lease{}
		if annotation != "" {
			l.Annotations = map[string]string{CleanReportAnnotation: annotation}
		}
		return l
	}
	report := `{"time":"2026-03-01T12:00:00.750000Z","clean":{"east":"True","west":"False"}}`
	target := &SyncTarget{Status: SyncTargetStatus{Conditions: []metav1.Condition{
		{Type: CleanCondition("east"), Status: metav1.ConditionTrue},
		{Type: CleanCondition("west"), Status: metav1.ConditionFalse},
		{Type: CleanCondition("north"), Status: metav1.ConditionTrue},
	}}}
	for _, tc := range []struct {
		name    string
		lease   *coordinationv1.Lease
		domains []string
		want    time.Time
	}{
		{name: "the report says what the status says", lease: lease(report), domains: []string{"east", "west"}, want: reported},
		{name: "no domain asked", lease: lease(report), want: reported},
		{name: "no Lease", domains: []string{"east"}},
		{name: "no report in the Lease", lease: lease(""), domains: []string{"east"}},
		{name: "a report that cannot be read", lease: lease("{"), domains: []string{"east"}},
		{name: "the report found otherwise: the status is not yet what it found", domains: []string{"east"},
			lease: lease(`{"time":"2026-03-01T12:00:00.000000Z","clean":{"east":"False"}}`)},
		{name: "a domain the report does not cover", lease: lease(report), domains: []string{"east", "north"}},
		{name: "a domain without a condition", lease: lease(`{"time":"2026-03-01T12:00:00.000000Z","clean":{"south":"True"}}`), domains: []string{"south"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := target.CleanReportedAt(tc.lease, tc.domains...); !got.Equal(tc.want) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
