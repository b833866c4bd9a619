package app

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func TestSwitchPlan(t *testing.T) {
	pair := func(active string, volumes int32, oldest *metav1.Time, action *schedulingv1alpha1.PairAction) *schedulingv1alpha1.LocationPair {
		return &schedulingv1alpha1.LocationPair{
			ObjectMeta: metav1.ObjectMeta{Name: "shop"},
			Spec:       schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west"},
			Status: schedulingv1alpha1.LocationPairStatus{ActiveLocation: active, Volumes: volumes, OldestLastSyncTime: oldest,
				LastAction: action},
		}
	}
	done := &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "east", To: "west", Progression: "Completed"}
	for _, tc := range []struct {
		name     string
		p        *schedulingv1alpha1.LocationPair
		mode     schedulingv1alpha1.SwitchMode
		to, says string
	}{
		{"a failover says how much it loses", pair("east", 3, ago(7*time.Minute), nil), schedulingv1alpha1.Failover, "west",
			"Fail locationpair/shop over from east to west? Its volumes (3) come back from their replicas: what was written in the last 7m at most is lost."},
		{"a failover back, after one completed", pair("west", 1, ago(time.Minute), done), schedulingv1alpha1.Failover, "east",
			"Fail locationpair/shop over from west to east? Its volumes (1) come back from their replicas: what was written in the last 60s at most is lost."},
		{"a failover with no replica yet says the claims wait", pair("east", 2, nil, nil), schedulingv1alpha1.Failover, "west",
			"Fail locationpair/shop over from east to west? Its volumes (2) come back from their replicas: none of them has a replica yet: their claims wait at west until east is back."},
		{"a relocate says the workloads stop", pair("east", 2, ago(time.Minute), nil), schedulingv1alpha1.Relocate, "west",
			"Relocate locationpair/shop from east to west? Its workloads stop at east until a last sync of its volumes (2) is ready, then run at west."},
		{"no switch while one is under way", pair("west", 1, nil, &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "east", To: "west", Progression: "Restoring"}),
			schedulingv1alpha1.Relocate, "", "locationpair/shop is in a failover from east to west (Restoring): wait until it completes"},
		{"a failover turns a relocate that waits for its Location into one", pair("east", 2, ago(3*time.Minute), &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Relocate, From: "east", To: "west", Progression: "Quiescing"}),
			schedulingv1alpha1.Failover, "west", "Fail locationpair/shop over from east to west? Its volumes (2) come back from their replicas: what was written in the last 3m at most is lost."},
		{"a relocate does not restart one under way", pair("east", 2, nil, &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Relocate, From: "east", To: "west", Progression: "FinalSync"}),
			schedulingv1alpha1.Relocate, "", "locationpair/shop is in a relocate from east to west (FinalSync): wait until it completes"},
		{"no switch before the hub took the pair up", pair("", 0, nil, nil), schedulingv1alpha1.Relocate, "",
			"locationpair/shop has no active Location yet: the hub has not taken it up"},
	} {
		to, question, err := switchPlan(tc.p, tc.mode, now)
		says := question
		if err != nil {
			says = err.Error()
		}
		if to != tc.to || says != tc.says {
			t.Errorf("%s: to %q, %q; want to %q, %q", tc.name, to, says, tc.to, tc.says)
		}
	}
}
