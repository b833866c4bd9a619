package dr

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// Decide is the pair's next step: the active Location, the action under way, the Fences to
// hold, the replications to keep and the replicas to record, and the pair's conditions.
func Decide(o Observation) Decision {
	d := Decision{Active: o.Active, Action: o.Action.DeepCopy(), History: o.History}
	if d.Active == "" {
		d.Active = o.Pair.Primary
	}
	if !o.Locations[o.Pair.Primary].Found || !o.Locations[o.Pair.Secondary].Found || o.overlap() != "" {
		d.Phase = schedulingv1alpha1.PairPending
		d.Replications = o.current()
		// A relocate under way keeps its workloads stopped until it can go on.
		d.Quiesce = d.Action != nil && d.Action.Mode == schedulingv1alpha1.Relocate && d.Action.Progression != schedulingv1alpha1.ProgressionCompleted
		d.conditions(o)
		return d
	}
	switch {
	case d.Action != nil && !d.Action.Over():
		d.step(o)
	case d.switchAsked(o):
	default:
		d.protect(o)
		d.completed(o)
	}
	d.record(o)
	d.recordDrills(o)
	d.Fence = o.stillFenced(d.Action)
	if o.Pair.Automatic {
		d.recheckIn(o.untilLost(d.Active))
	}
	d.phase(o)
	d.conditions(o)
	return d
}

// step carries an action under way on as far as what is observed allows: each progression
// either takes the action on to the next (Transitions), whose own step then runs in the same
// decision, or holds it where it is.
func (d *Decision) step(o Observation) {
	a := d.Action
	d.Replications = o.current()
	d.giveUpRelocate(o)
	for from := ""; from != a.Progression; {
		switch from = a.Progression; from {
		case schedulingv1alpha1.ProgressionFencing:
			d.fence(o)
		case schedulingv1alpha1.ProgressionQuiescing:
			d.quiesce(o)
		case schedulingv1alpha1.ProgressionFinalSync:
			d.finalSync(o)
		case schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionStarting:
			d.restore(o)
		}
	}
	// A relocate's workloads stay stopped until every volume is back: a workload started
	// again where it ran would write past the last sync. A failover's stop while it fences
	// the Location it leaves, whose writes from then on are lost anyway. Both start at the
	// Location switched to once it is Starting.
	d.Quiesce = a.Progression != schedulingv1alpha1.ProgressionCompleted && a.Progression != schedulingv1alpha1.ProgressionStarting &&
		(a.Mode == schedulingv1alpha1.Relocate || a.Progression == schedulingv1alpha1.ProgressionFencing)
}

// moveTo takes the action on to progression p, as of now, and adds the step.
func (d *Decision) moveTo(o Observation, p string) {
	now := metav1.NewTime(o.Now)
	d.Action.Progression, d.Action.ProgressionTime = p, &now
	d.Action.Steps = append(d.Action.Steps, schedulingv1alpha1.PairStep{Progression: p, Time: now})
}

// phase is Protecting, or the action's phase while it is under way, and FailedOver or
// Relocated after it until every volume has a replica taken since it completed.
func (d *Decision) phase(o Observation) {
	a := d.Action
	if a != nil {
		d.returned(o)
	}
	switch {
	case a == nil || a.Progression == schedulingv1alpha1.ProgressionCalledOff:
		d.Phase = schedulingv1alpha1.PairProtecting
	case !a.Over() && a.Mode == schedulingv1alpha1.Failover:
		d.Phase = schedulingv1alpha1.PairFailingOver
	case !a.Over():
		d.Phase = schedulingv1alpha1.PairRelocating
	case o.protectedFrom(d.Active, d.Replicas):
		d.Phase = schedulingv1alpha1.PairProtecting
		d.protectedAgain(o)
		d.returnSync(o)
	case a.Mode == schedulingv1alpha1.Failover:
		d.Phase = schedulingv1alpha1.PairFailedOver
	default:
		d.Phase = schedulingv1alpha1.PairRelocated
	}
}

// recheckIn asks for a look at the pair again after wait, unless one is asked for sooner.
func (d *Decision) recheckIn(wait time.Duration) {
	if wait > 0 && (d.Recheck == 0 || wait < d.Recheck) {
		d.Recheck = wait
	}
}
