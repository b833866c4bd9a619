package app

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestTargetTable(t *testing.T) {
	ready := func(status metav1.ConditionStatus, reason string) []metav1.Condition {
		return []metav1.Condition{{Type: workloadv1alpha1.ConditionReady, Status: status, Reason: reason}}
	}
	targets := []workloadv1alpha1.SyncTarget{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"loc": "east"}},
			Spec:       workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}, Priority: 1},
			Status: workloadv1alpha1.SyncTargetStatus{
				Key: "k1", Conditions: ready(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating),
				StorageClasses: []workloadv1alpha1.StorageClassInfo{{Name: "fast"}, {Name: "local"}},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "m2", Labels: map[string]string{"loc": "east", "zone": "b"}},
			Spec:       workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}, Unschedulable: true, Priority: 5},
			Status:     workloadv1alpha1.SyncTargetStatus{Key: "k2", Conditions: ready(metav1.ConditionFalse, workloadv1alpha1.ReasonUnreachable)},
		},
		// Registered, never heard from, and evicting.
		{ObjectMeta: metav1.ObjectMeta{Name: "m3"}, Spec: workloadv1alpha1.SyncTargetSpec{Evict: true, Unschedulable: true}},
	}
	location := func(name string, sel metav1.LabelSelector) schedulingv1alpha1.Location {
		return schedulingv1alpha1.Location{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1alpha1.LocationSpec{InstanceSelector: sel}}
	}
	locations := []schedulingv1alpha1.Location{
		location("east", metav1.LabelSelector{MatchLabels: map[string]string{"loc": "east"}}),
		location("everywhere", metav1.LabelSelector{}),
		location("zone-b", metav1.LabelSelector{MatchLabels: map[string]string{"zone": "b"}}),
		location("broken", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "loc", Operator: "Near"}}}),
	}
	renewed := func(name string, d time.Duration) coordinationv1.Lease {
		return coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name},
			Spec: coordinationv1.LeaseSpec{RenewTime: &metav1.MicroTime{Time: now.Add(-d)}}}
	}
	// m3 has a Lease that was never renewed.
	leases := []coordinationv1.Lease{renewed("m1", 8*time.Second), renewed("m2", 42*time.Minute), {ObjectMeta: metav1.ObjectMeta{Name: "m3"}}}
	for _, tc := range []struct{ format, want string }{
		{"", "" +
			"NAME   KEY      LOCATIONS                READY                       LAST HEARTBEAT   DOMAINS\n" +
			"m1     k1       east,everywhere          True                        8s               east\n" +
			"m2     k2       east,everywhere,zone-b   False,Cordoned              42m              east,west\n" +
			"m3     <none>   everywhere               Unknown,Cordoned,Evicting   <unknown>        <none>\n"},
		{"wide", "" +
			"NAME   KEY      LOCATIONS                READY                       LAST HEARTBEAT   DOMAINS     REASON         PRIORITY   STORAGECLASSES\n" +
			"m1     k1       east,everywhere          True                        8s               east        Heartbeating   1          fast,local\n" +
			"m2     k2       east,everywhere,zone-b   False,Cordoned              42m              east,west   Unreachable    5          <none>\n" +
			"m3     <none>   everywhere               Unknown,Cordoned,Evicting   <unknown>        <none>      <none>         0          <none>\n"},
	} {
		out, errOut := printed(t, tc.format, listing{table: targetTable(targets, locations, leases, now)})
		if out != tc.want || errOut != "" {
			t.Errorf("-o %q: stdout:\n%s\nwant:\n%s\nstderr: %q", tc.format, out, tc.want, errOut)
		}
	}
}
