package health

import (
	"errors"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
	for _, tc := range []struct {
		name  string
		grace time.Duration
		lease *coordinationv1.Lease
		// unready: the target is not Ready now. lostHub: the hub's API server does not answer
		// the controller; else hubBack is how long ago it began to answer (zero: an hour).
		// unseen: it never heartbeat.
		unready, unseen, lostHub bool
		hubBack                  time.Duration
		reason                   string
		status                   metav1.ConditionStatus
		recheck                  time.Duration
	}{
		{name: "no Lease, never seen", unready: true, unseen: true, reason: workloadv1alpha1.ReasonNeverSeen, status: metav1.ConditionFalse},
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
		{name: "Lease of a Ready target gone", grace: 3 * time.Second,
			reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "Lease of an Unreachable target gone", grace: 3 * time.Second, unready: true,
			reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "Ready target whose Lease went stale while the hub does not answer", grace: 3 * time.Second, lease: lease(10*time.Second, nil),
			lostHub: true, reason: workloadv1alpha1.ReasonHeartbeating, status: metav1.ConditionTrue, recheck: 3 * time.Second},
		{name: "Ready target with a stale Lease, the hub back for less than the grace", grace: 3 * time.Second, lease: lease(10*time.Second, nil),
			hubBack: time.Second, reason: workloadv1alpha1.ReasonHeartbeating, status: metav1.ConditionTrue, recheck: 2 * time.Second},
		{name: "Ready target with a stale Lease, the hub back for the grace", grace: 3 * time.Second, lease: lease(10*time.Second, nil),
			hubBack: 3 * time.Second, reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "Unreachable target stays so when the hub is back", grace: 3 * time.Second, lease: lease(10*time.Second, nil),
			unready: true, hubBack: time.Second, reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
		{name: "Unreachable target stays so while the hub does not answer", grace: 3 * time.Second, lease: lease(10*time.Second, nil),
			unready: true, lostHub: true, reason: workloadv1alpha1.ReasonUnreachable, status: metav1.ConditionFalse},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reconciler{Grace: tc.grace}
			hubBack := now.Add(-time.Hour)
			switch {
			case tc.lostHub:
				hubBack = time.Time{}
			case tc.hubBack > 0:
				hubBack = now.Add(-tc.hubBack)
			}
			v := r.evaluate(tc.lease, !tc.unready, !tc.unseen, hubBack, now)
			if v.reason != tc.reason || v.status != tc.status || v.recheck != tc.recheck {
				t.Fatalf("got %s/%s recheck %s, want %s/%s recheck %s", v.status, v.reason, v.recheck, tc.status, tc.reason, tc.recheck)
			}
		})
	}
}

func TestContact(t *testing.T) {
	c, start := &contact{}, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if _, asked := c.Since(); asked {
		t.Fatal("asked before the first question")
	}
	steps := []struct {
		answered bool
		changed  bool
		since    time.Time
	}{
		{answered: false, changed: true},
		{answered: false, changed: false},
		{answered: true, changed: true, since: start.Add(2 * time.Second)},
		{answered: true, changed: false, since: start.Add(2 * time.Second)},
		{answered: false, changed: true},
		{answered: true, changed: true, since: start.Add(5 * time.Second)},
	}
	for i, s := range steps {
		now := start.Add(time.Duration(i) * time.Second)
		changed := c.observe(s.answered, now)
		if since, asked := c.Since(); changed != s.changed || !since.Equal(s.since) || !asked {
			t.Fatalf("step %d (answered %v): changed %v, since %s; want %v, %s", i, s.answered, changed, since, s.changed, s.since)
		}
	}
}

func TestRefusal(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "leases"}, "", errors.New("no"))
	for _, tc := range []struct {
		name        string
		err         error
		since, want time.Time
	}{
		{name: "an answer", since: now.Add(-time.Second)},
		{name: "another error", err: apierrors.NewNotFound(schema.GroupResource{Resource: "leases"}, "x"), since: now.Add(-time.Second)},
		{name: "a first refusal", err: forbidden, want: now},
		{name: "a refusal after others", err: forbidden, since: now.Add(-time.Minute), want: now.Add(-time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := refusal(tc.err, tc.since, now); !got.Equal(tc.want) {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
