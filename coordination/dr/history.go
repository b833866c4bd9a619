package dr

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// startedBy says what started the action a: a declared switch starts as it is asked for, a
// failover the pair starts on its own from the loss of From, when the last of its targets
// stopped heartbeating.
func (o Observation) startedBy(a *schedulingv1alpha1.PairAction) {
	a.Trigger, a.TriggerTime = schedulingv1alpha1.TriggerDeclared, a.StartTime.DeepCopy()
	if !a.Automatic {
		return
	}
	a.Trigger = schedulingv1alpha1.TriggerLocationLost
	var lost time.Time
	for _, t := range o.Locations[a.From].Targets {
		if t.UnreachableSince.After(lost) {
			lost = t.UnreachableSince
		}
	}
	if !lost.IsZero() {
		a.TriggerTime = &metav1.Time{Time: lost}
	}
}

// measure records what the action a, completed now, cost: its recovery time and point, and
// the volumes it restored from the replicas taken, set aside, and left waiting for want of
// a replica or of protection.
func (o Observation) measure(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) {
	from := a.StartTime.Time
	if a.TriggerTime != nil {
		from = a.TriggerTime.Time
	}
	a.RecoveryTime = &metav1.Duration{Duration: o.Now.Sub(from)}
	a.RecoveryPoint = &metav1.Duration{}
	if a.Mode == schedulingv1alpha1.Failover && a.OldestReplicaTime != nil && from.After(a.OldestReplicaTime.Time) {
		a.RecoveryPoint.Duration = from.Sub(a.OldestReplicaTime.Time)
	}
	a.Restored, a.SetAside, a.Waiting = 0, 0, 0
	for _, v := range o.Volumes {
		switch {
		case o.asked(v, a) || o.usable(v, a, taken) != nil:
			a.Restored++
		case v.Restore != nil && *v.Restore == "":
			a.Waiting++
		}
		if !v.SetAsideAt.IsZero() && !v.SetAsideAt.Before(a.StartTime.Time) {
			a.SetAside++
		}
	}
	for _, v := range o.Unprotected {
		if v.Restore != nil && *v.Restore == "" {
			a.Waiting++
		}
	}
}

// record adds the action to the history when it ended in this decision, keeping the last
// HistoryLength.
func (d *Decision) record(o Observation) {
	a := d.Action
	if a == nil || !a.Over() || o.Action != nil && o.Action.Over() && o.Action.StartTime.Equal(&a.StartTime) {
		return
	}
	d.History, d.Ended = appendHistory(d.History, a), true
}

// recordDrills adds to the history each drill that was ready or ended and is not in it yet,
// unless older than everything a full history keeps.
func (d *Decision) recordDrills(o Observation) {
	for i := range o.Drills {
		a := &o.Drills[i]
		recorded := slices.ContainsFunc(d.History, func(h schedulingv1alpha1.PairAction) bool {
			return h.Mode == schedulingv1alpha1.DrillMode && h.StartTime.Equal(&a.StartTime)
		})
		full := len(d.History) >= schedulingv1alpha1.HistoryLength && a.StartTime.Before(&d.History[0].StartTime)
		if !recorded && !full {
			d.History = appendHistory(d.History, a)
		}
	}
}

// appendHistory is history with a added, its last HistoryLength entries.
func appendHistory(history []schedulingv1alpha1.PairAction, a *schedulingv1alpha1.PairAction) []schedulingv1alpha1.PairAction {
	out := append(make([]schedulingv1alpha1.PairAction, 0, len(history)+1), history...)
	out = append(out, *a.DeepCopy())
	if n := len(out) - schedulingv1alpha1.HistoryLength; n > 0 {
		out = out[n:]
	}
	return out
}

// protectedAgain records on the completed switch, and on its history entry, how long after it
// completed the pair protected again, the first time it does.
func (d *Decision) protectedAgain(o Observation) {
	a := d.Action
	if a.Progression != schedulingv1alpha1.ProgressionCompleted || a.CompletionTime == nil || a.ProtectedAgain != nil {
		return
	}
	a.ProtectedAgain = &metav1.Duration{Duration: o.Now.Sub(a.CompletionTime.Time)}
	d.recordReturn()
}

// returnSync records on the switch that protected again the longest of the syncs back, once
// the source of every volume reported its sync: a destination may report its image, which
// protects the volume, before the source reports the sync.
func (d *Decision) returnSync(o Observation) {
	a := d.Action
	if a.Progression != schedulingv1alpha1.ProgressionCompleted || a.ProtectedAgain == nil || a.ReturnSync != nil {
		return
	}
	if a.ReturnSync = o.longestSync(d.Active, a.CompletionTime.Time); a.ReturnSync != nil {
		d.recordReturn()
	}
}

// recordReturn copies what the switch recorded of the return onto its history entry.
func (d *Decision) recordReturn() {
	a := d.Action
	d.History = slices.Clone(d.History)
	for i := range d.History {
		if h := &d.History[i]; h.StartTime.Equal(&a.StartTime) {
			h.ProtectedAgain, h.ReturnTime, h.ReturnSync = a.ProtectedAgain, a.ReturnTime, a.ReturnSync
		}
	}
}

// returned records on the completed switch when the pair first sees the Location it left able
// to take replicas again: a target of it Ready, clean and unfenced. The pair looks again at
// every change of a target, of its clean report and of its Fences, so it sees that as it
// comes; the facts' own times would not tell it (a Fence that never held goes with no trace
// on the target).
func (d *Decision) returned(o Observation) {
	a := d.Action
	if a.Progression != schedulingv1alpha1.ProgressionCompleted || a.CompletionTime == nil || a.ReturnTime != nil || a.ProtectedAgain != nil {
		return
	}
	l := o.Locations[a.From]
	takes := l.destinations()
	if slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready && t.Clean && slices.Contains(takes, t.Key) }) {
		now := metav1.NewTime(o.Now)
		a.ReturnTime = &now
	}
}

// longestSync is the longest of the syncs of the volumes bound at active, each volume's last
// one reported by its source; nil until every such volume that replicates reports one that
// began since (to the second: the API keeps no finer time).
func (o Observation) longestSync(active string, since time.Time) *metav1.Duration {
	var longest *metav1.Duration
	for _, v := range o.Volumes {
		r := v.Replication
		if !v.Bound || !o.Locations[active].has(v.Owner) || r == nil {
			continue
		}
		if r.SourceLastSyncStart.Before(since.Truncate(time.Second)) || r.SourceLastSync.Before(r.SourceLastSyncStart) {
			return nil
		}
		if took := r.SourceLastSync.Sub(r.SourceLastSyncStart); longest == nil || took > longest.Duration {
			longest = &metav1.Duration{Duration: took}
		}
	}
	return longest
}
