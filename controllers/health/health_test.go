package health

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestEvaluate(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	lease := func(age time.Duration, periodSeconds *int32) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			RenewTime:            &metav1.MicroTime{Time: now.Add(-age)},
			LeaseDurationSeconds: periodSeconds,
		}}
	}
	recorded := ptr.To(metav1.NewTime(now.Add(-time.Minute)))
	for _, tc := range []struct {
		name     string
		grace    time.Duration
		recorded *metav1.Time
		lease    *coordinationv1.Lease
		reason   string
		status   metav1.ConditionStatus
		recheck  time.Duration
	}{
		{name: "no Lease, never seen", reason: workloadv1alpha1.ReasonNeverSeen, status: metav1.ConditionFalse},
		{name: "fresh Lease", grace: 3 * time.Second, lease: lease(time.Second, nil),
			reason: workloadv1alpha1.ReasonHeartbeating, status: metav1.ConditionTrue, recheck: 2 * time.Second},
		{name: "Lease older than the grace", grace: 3 * time.Second, lease: lease(3*time.Second, nil),
			reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "grace from the announced period", lease: lease(25*time.Second, ptr.To[int32](10)),
			reason: workloadv1alpha1.ReasonHeartbeating, status: metav1.ConditionTrue, recheck: 5 * time.Second},
		{name: "announced period passed three times", lease: lease(31*time.Second, ptr.To[int32](10)),
			reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "default period without an announcement", lease: lease(29*time.Second, nil),
			reason: workloadv1alpha1.ReasonHeartbeating, status: metav1.ConditionTrue, recheck: time.Second},
		{name: "Lease gone after heartbeats", grace: 3 * time.Second, recorded: recorded,
			reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Grace: tc.grace}
			v := r.evaluate(tc.recorded, tc.lease, now)
			if v.reason != tc.reason || v.status != tc.status || v.recheck != tc.recheck {
				t.Fatalf("got %s/%s recheck %s, want %s/%s recheck %s", v.status, v.reason, v.recheck, tc.status, tc.reason, tc.recheck)
			}
			if tc.reason != workloadv1alpha1.ReasonNeverSeen && v.lastHeartbeat == nil {
				t.Fatal("no last heartbeat time")
			}
		})
	}
}

func TestEvaluateKeepsASecondResolution(t *testing.T) {
	renewed := time.Date(2026, 3, 1, 12, 0, 0, 987654321, time.UTC)
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: renewed}}}
	v := (&Reconciler{Grace: time.Minute}).evaluate(nil, lease, renewed.Add(time.Second))
	// A finer time would differ from its own round trip through the API and patch forever.
	if !v.lastHeartbeat.Equal(ptr.To(metav1.NewTime(renewed.Truncate(time.Second)))) {
		t.Fatalf("last heartbeat %s", v.lastHeartbeat)
	}
}
