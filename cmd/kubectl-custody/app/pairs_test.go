package app

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func TestPairTable(t *testing.T) {
	protecting := schedulingv1alpha1.LocationPair{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec:       schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "5m"},
		Status: schedulingv1alpha1.LocationPairStatus{ActiveLocation: "east", Phase: schedulingv1alpha1.PairProtecting,
			Volumes: 3, ProtectedVolumes: 2, OldestLastSyncTime: ago(7 * time.Minute),
			Conditions: []metav1.Condition{{Type: schedulingv1alpha1.ConditionDataProtected, Status: metav1.ConditionFalse, Reason: "ReplicationLagging"}}},
	}
	failedOver := schedulingv1alpha1.LocationPair{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec:       schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "1h"},
		Status: schedulingv1alpha1.LocationPairStatus{ActiveLocation: "west", Phase: schedulingv1alpha1.PairFailedOver,
			LastAction: &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "east", To: "west", Progression: "Completed"}},
	}
	starting := schedulingv1alpha1.LocationPair{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "5m"},
		Status: schedulingv1alpha1.LocationPairStatus{ActiveLocation: "west", Phase: schedulingv1alpha1.PairFailingOver,
			LastAction: &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "east", To: "west", Progression: "Starting"},
			Conditions: []metav1.Condition{{Type: schedulingv1alpha1.ConditionProgressing, Status: metav1.ConditionTrue, Reason: "Starting",
				Message: "failover east to west: waiting for 1 workloads to be ready in west, the first web/Deployment/front (1 of 3 replicas ready)"}}},
	}
	// Not yet seen by the dr controller.
	fresh := schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: "new"},
		Spec: schedulingv1alpha1.LocationPairSpec{Primary: "a", Secondary: "b"}}
	items := []schedulingv1alpha1.LocationPair{protecting, failedOver, starting, fresh}
	for _, tc := range []struct{ format, want string }{
		{"", "" +
			"NAME   PRIMARY   SECONDARY   ACTIVE   PHASE         PROTECTED   OLDEST REPLICA\n" +
			"shop   east      west        east     Protecting    2/3         7m\n" +
			"db     east      west        west     FailedOver    0/0         <unknown>\n" +
			"web    east      west        west     FailingOver   0/0         <unknown>\n" +
			"new    a         b           <none>   <none>        0/0         <unknown>\n"},
		{"wide", "" +
			"NAME   PRIMARY   SECONDARY   ACTIVE   PHASE         PROTECTED   OLDEST REPLICA   INTERVAL   REASON               LAST ACTION                      WAITING FOR\n" +
			"shop   east      west        east     Protecting    2/3         7m               5m         ReplicationLagging   <none>                           <none>\n" +
			"db     east      west        west     FailedOver    0/0         <unknown>        1h         <none>               Failover east→west Completed     <none>\n" +
			"web    east      west        west     FailingOver   0/0         <unknown>        5m         <none>               Failover east→west Starting      1 workloads to be ready in west, the first web/Deployment/front (1 of 3 replicas ready)\n" +
			"new    a         b           <none>   <none>        0/0         <unknown>        <none>     <none>               <none>                           <none>\n"},
	} {
		out, errOut := printed(t, tc.format, listing{table: pairTable(items, now)})
		if out != tc.want || errOut != "" {
			t.Errorf("-o %q: stdout:\n%s\nwant:\n%s\nstderr: %q", tc.format, out, tc.want, errOut)
		}
	}
}
