package dr

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// serve is the Starting step of a switch: every claim with a replica is bound at the Location
// switched to, where the workloads of the pair's namespaces start. A workload's status written
// before the step began is the Location left's report, which says nothing of the new one: it
// is cleared (Unreported), so that the target that reports it now writes its own. The switch
// completes once every workload's status, written since, says its replicas are ready.
func (d *Decision) serve(o Observation) {
	a := d.Action
	since := stepTime(a)
	d.Unreported = nil
	for _, w := range o.Workloads {
		if w.Reported.Before(since) {
			d.Unreported = append(d.Unreported, w.Key())
		}
	}
	if len(o.unready(since)) > 0 {
		return
	}
	d.moveTo(o, schedulingv1alpha1.ProgressionCompleted)
	now := metav1.NewTime(o.Now)
	a.CompletionTime, a.Duration = &now, &metav1.Duration{Duration: o.Now.Sub(a.StartTime.Time)}
	a.OldestReplicaTime = o.oldestRestored(a, d.Replicas)
	o.measure(a, d.Replicas)
}

// unready are the workloads whose status was not written since the Starting step began at
// since, or says fewer replicas ready than their spec asks for.
func (o Observation) unready(since time.Time) []Workload {
	var out []Workload
	for _, w := range o.Workloads {
		if w.Reported.Before(since) || w.Ready < w.Replicas {
			out = append(out, w)
		}
	}
	return out
}

// awaitedWorkloads says what the Starting step waits for: the workloads not ready yet.
func (o Observation) awaitedWorkloads(a *schedulingv1alpha1.PairAction) string {
	since := stepTime(a)
	waiting := o.unready(since)
	w := waiting[0]
	what := fmt.Sprintf("%d workloads to be ready in %s, the first %s", len(waiting), a.To, w.Key())
	if w.Reported.Before(since) {
		return what + ", whose status is the Location left's"
	}
	return fmt.Sprintf("%s (%d of %d replicas ready)", what, w.Ready, w.Replicas)
}

// stepTime is when the action reached its step; zero when it does not say.
func stepTime(a *schedulingv1alpha1.PairAction) time.Time {
	if a.ProgressionTime == nil {
		return time.Time{}
	}
	return a.ProgressionTime.Time
}
