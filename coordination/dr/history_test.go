package dr

import (
	"testing"
	"time"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// next is the observation after d, later by elapsed: the pair's status as d wrote it.
func next(o Observation, d Decision, elapsed time.Duration) Observation {
	o.Now = o.Now.Add(elapsed)
	o.Active, o.Action, o.History = d.Active, d.Action, d.History
	return o
}

func TestHistoryRecordsAFailoverWithWhatItCost(t *testing.T) {
	// east was lost 2m ago, and its volume's replica was taken 3m ago.
	o := with(replicating(pair(), 3*time.Minute), "east", lost(2*time.Minute))
	d := Decide(o)
	a := d.Action
	expect(t, a.Trigger, schedulingv1alpha1.TriggerLocationLost)
	expect(t, a.TriggerTime.Time, ago(2*time.Minute))
	expect(t, steps(a), []string{schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionRestoring})
	expect(t, len(d.History), 0)

	// 40s later the volume is restored and bound on dest, the volume at east set aside; the
	// workload's status is still the one east reported.
	o = next(o, d, 40*time.Second)
	restore := d.Restores["ns/c"]
	o.Volumes[0].Owner, o.Volumes[0].Restore, o.Volumes[0].SetAsideAt = dest, &restore, o.Now.Add(-10*time.Second)
	o.Workloads = []Workload{{Namespace: "ns", Kind: "Deployment", Name: "web", Replicas: 1, Ready: 1, Reported: ago(3 * time.Minute)}}
	d = Decide(o)
	expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionStarting)
	expect(t, len(d.History), 0)

	// 15s later the workload reported ready at west.
	o = next(o, d, 15*time.Second)
	o.Workloads[0].Reported = o.Now.Add(-time.Second)
	d = Decide(o)
	a = d.Action
	expect(t, a.Progression, schedulingv1alpha1.ProgressionCompleted)
	expect(t, steps(a), []string{schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionStarting, schedulingv1alpha1.ProgressionCompleted})
	expect(t, a.RecoveryTime.Duration, 2*time.Minute+55*time.Second)
	expect(t, a.RecoveryPoint.Duration, time.Minute)
	expect(t, [3]int32{a.Restored, a.SetAside, a.Waiting}, [3]int32{1, 1, 0})
	expect(t, len(d.History), 1)
	expect(t, d.Ended, true)
	expect(t, d.History[0].RecoveryTime.Duration, a.RecoveryTime.Duration)

	// Decided again, the switch is recorded once.
	d = Decide(next(o, d, 10*time.Second))
	expect(t, len(d.History), 1)
	expect(t, d.Ended, false)
}

func TestHistoryRecordsADeclaredRelocateAsLosingNothing(t *testing.T) {
	o := replicating(pair(), time.Minute)
	o.Pair.Declared, o.Pair.Generation = "west", 2
	d := Decide(o)
	expect(t, d.Action.Trigger, schedulingv1alpha1.TriggerDeclared)
	expect(t, d.Action.TriggerTime.Time, now)
	expect(t, d.Action.Steps[0].Progression, schedulingv1alpha1.ProgressionQuiescing)

	d.Action.Progression = schedulingv1alpha1.ProgressionRestoring
	o = next(o, d, time.Minute)
	restore := dest + "/" + o.Volumes[0].Replica.Snapshot
	o.Volumes[0].Owner, o.Volumes[0].Restore = dest, &restore
	d = Decide(o)
	expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
	expect(t, d.Action.RecoveryTime.Duration, time.Minute)
	expect(t, d.Action.RecoveryPoint.Duration, time.Duration(0))
	expect(t, len(d.History), 1)
}

func TestHistoryKeepsTheLastSwitches(t *testing.T) {
	o := calledOff()
	o.Action.Progression = schedulingv1alpha1.ProgressionFencing
	o.Action.Automatic = true
	for range schedulingv1alpha1.HistoryLength {
		o.History = append(o.History, schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Relocate})
	}
	d := Decide(o)
	expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCalledOff)
	expect(t, len(d.History), schedulingv1alpha1.HistoryLength)
	expect(t, d.History[len(d.History)-1].Progression, schedulingv1alpha1.ProgressionCalledOff)
	expect(t, len(o.History), schedulingv1alpha1.HistoryLength)
	expect(t, o.History[len(o.History)-1].Progression, "")
}

func steps(a *schedulingv1alpha1.PairAction) []string {
	out := []string{}
	for _, s := range a.Steps {
		out = append(out, s.Progression)
	}
	return out
}

func TestHistoryRecordsWhenThePairProtectedAgain(t *testing.T) {
	// A failover completed 5m ago; the volume's first replica back at east is a minute old.
	o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
	o.History = []schedulingv1alpha1.PairAction{*o.Action.DeepCopy()}
	d := Decide(o)
	expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
	expect(t, d.Action.ProtectedAgain.Duration, 5*time.Minute)
	expect(t, d.History[0].ProtectedAgain.Duration, 5*time.Minute)
	expect(t, o.History[0].ProtectedAgain == nil, true)

	// Decided again later, it keeps the first time.
	d = Decide(next(o, d, time.Minute))
	expect(t, d.Action.ProtectedAgain.Duration, 5*time.Minute)
}

func TestHistoryRecordsTheReturnOfTheLocationLeftAndTheSyncThatProtectedItAgain(t *testing.T) {
	// A failover completed 5m ago; east's targets are still fenced, and nothing replicated
	// back to east yet.
	o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
	o.History = []schedulingv1alpha1.PairAction{*o.Action.DeepCopy()}
	o.Volumes[0].Replication.Destination, o.Volumes[0].Replication.Image = "e1", nil
	o = with(o, "east", fenceState(fencing.Fenced))
	d := Decide(o)
	expect(t, d.Phase, schedulingv1alpha1.PairFailedOver)
	expect(t, d.Action.ReturnTime == nil, true)

	// A minute later e1's Fence was lifted: east can take replicas again.
	o = with(next(o, d, time.Minute), "east", fenceState(fencing.Unfenced), "e1")
	d = Decide(o)
	expect(t, d.Phase, schedulingv1alpha1.PairFailedOver)
	expect(t, d.Action.ReturnTime.Time, o.Now)
	returned := o.Now

	// 30s later the first sync back, 20s long, gave e1 a replica, which e1 reported before
	// the source reported the sync.
	o = next(o, d, 30*time.Second)
	r := o.Volumes[0].Replication
	o.Volumes[0].Replication = &Replication{Source: r.Source, Destination: "e1", Image: replica("e1", 0), ImageReady: true}
	o.Volumes[0].Replication.Image.Time.Time = o.Now.Add(-25 * time.Second)
	d = Decide(o)
	expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
	expect(t, d.Action.ProtectedAfterReturn().Duration, 30*time.Second)
	expect(t, d.Action.ReturnSync == nil, true)

	// The source's report comes a moment later.
	o = next(o, d, time.Second)
	o.Volumes[0].Replication.SourceLastSyncStart, o.Volumes[0].Replication.SourceLastSync = o.Now.Add(-26*time.Second), o.Now.Add(-6*time.Second)
	d = Decide(o)
	for _, a := range []*schedulingv1alpha1.PairAction{d.Action, &d.History[0]} {
		expect(t, a.ProtectedAgain.Duration, 6*time.Minute+30*time.Second)
		expect(t, a.ReturnTime.Time, returned)
		expect(t, a.ProtectedAfterReturn().Duration, 30*time.Second)
		expect(t, a.ReturnSync.Duration, 20*time.Second)
	}
}
