package app

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func TestHistoryTable(t *testing.T) {
	at := func(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(d)) }
	step := func(p string, d time.Duration) schedulingv1alpha1.PairStep {
		return schedulingv1alpha1.PairStep{Progression: p, Time: at(d)}
	}
	detected := at(-time.Minute)
	failover := schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, Automatic: true, From: "east", To: "west",
		Trigger: schedulingv1alpha1.TriggerLocationLost, TriggerTime: &detected, StartTime: at(0), Progression: schedulingv1alpha1.ProgressionCompleted,
		Steps:        []schedulingv1alpha1.PairStep{step("Fencing", 0), step("Restoring", 4*time.Second), step("Completed", 41*time.Second)},
		RecoveryTime: &metav1.Duration{Duration: 101 * time.Second}, RecoveryPoint: &metav1.Duration{Duration: 3 * time.Minute},
		Restored: 2, SetAside: 2, ProtectedAgain: &metav1.Duration{Duration: 38 * time.Second}}
	completed, returned := at(41*time.Second), at(66*time.Second)
	failover.CompletionTime, failover.ReturnTime, failover.ReturnSync = &completed, &returned, &metav1.Duration{Duration: 9 * time.Second}
	calledOff := schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, Automatic: true, From: "west", To: "east",
		Trigger: schedulingv1alpha1.TriggerLocationLost, StartTime: at(time.Hour), Progression: schedulingv1alpha1.ProgressionCalledOff,
		Steps: []schedulingv1alpha1.PairStep{step("Fencing", time.Hour), step("CalledOff", time.Hour+20*time.Second)}}
	relocating := schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Relocate, From: "west", To: "east",
		Trigger: schedulingv1alpha1.TriggerDeclared, StartTime: at(2 * time.Hour), Progression: schedulingv1alpha1.ProgressionFinalSync,
		Steps: []schedulingv1alpha1.PairStep{step("Quiescing", 2*time.Hour), step("FinalSync", 2*time.Hour+5*time.Second)}}
	p := &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Status: schedulingv1alpha1.LocationPairStatus{LastAction: &relocating, History: []schedulingv1alpha1.PairAction{failover, calledOff}}}
	for _, tc := range []struct{ format, want string }{
		{"", "" +
			"STARTED                MODE       FROM   TO     TRIGGER        RESULT      RECOVERY TIME   RECOVERY POINT   RESTORED   SET ASIDE   WAITING\n" +
			"2026-07-01T14:00:00Z   Relocate   west   east   Declared       FinalSync   <none>          <none>           <none>     <none>      <none>\n" +
			"2026-07-01T13:00:00Z   Failover   west   east   LocationLost   CalledOff   <none>          <none>           <none>     <none>      <none>\n" +
			"2026-07-01T12:00:00Z   Failover   east   west   LocationLost   Completed   1m41s           3m0s             2          2           0\n"},
		{"wide", "" +
			"STARTED                MODE       FROM   TO     TRIGGER        RESULT      RECOVERY TIME   RECOVERY POINT   RESTORED   SET ASIDE   WAITING   STEPS                                   PROTECTED AGAIN   AFTER RETURN   RETURN SYNC\n" +
			"2026-07-01T14:00:00Z   Relocate   west   east   Declared       FinalSync   <none>          <none>           <none>     <none>      <none>    Quiescing+0s,FinalSync+5s               <none>            <none>         <none>\n" +
			"2026-07-01T13:00:00Z   Failover   west   east   LocationLost   CalledOff   <none>          <none>           <none>     <none>      <none>    Fencing+0s,CalledOff+20s                <none>            <none>         <none>\n" +
			"2026-07-01T12:00:00Z   Failover   east   west   LocationLost   Completed   1m41s           3m0s             2          2           0         Fencing+0s,Restoring+4s,Completed+41s   38s               13s            9s\n"},
	} {
		out, errOut := printed(t, tc.format, listing{table: historyTable(p)})
		if out != tc.want || errOut != "" {
			t.Errorf("-o %q: stdout:\n%s\nwant:\n%s\nstderr: %q", tc.format, out, tc.want, errOut)
		}
	}
}
