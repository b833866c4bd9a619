package dr

import (
	"slices"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// Transition is one allowed change of a pair's progression (its last action's
// PairAction.Progression), named after the step of Decide that takes it.
type Transition struct {
	From, To string
	Name     string
}

// Transitions lists every change of progression a pair may take. The empty progression is a
// pair that never switched; a pair whose last action is over (Completed or CalledOff) starts
// the next as one that never switched does. Decide does not consult it: the table and model
// tests hold every decision to it, as coordination's tests hold its phases.
var Transitions = []Transition{
	{"", schedulingv1alpha1.ProgressionFencing, "failover"},
	{"", schedulingv1alpha1.ProgressionQuiescing, "relocate"},
	{schedulingv1alpha1.ProgressionCompleted, schedulingv1alpha1.ProgressionFencing, "failover"},
	{schedulingv1alpha1.ProgressionCompleted, schedulingv1alpha1.ProgressionQuiescing, "relocate"},
	{schedulingv1alpha1.ProgressionCalledOff, schedulingv1alpha1.ProgressionFencing, "failover"},
	{schedulingv1alpha1.ProgressionCalledOff, schedulingv1alpha1.ProgressionQuiescing, "relocate"},
	{schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionRestoring, "fence"},
	{schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionCalledOff, "fence"},
	{schedulingv1alpha1.ProgressionQuiescing, schedulingv1alpha1.ProgressionFinalSync, "quiesce"},
	{schedulingv1alpha1.ProgressionQuiescing, schedulingv1alpha1.ProgressionFencing, "giveUpRelocate"},
	{schedulingv1alpha1.ProgressionFinalSync, schedulingv1alpha1.ProgressionRestoring, "finalSync"},
	{schedulingv1alpha1.ProgressionFinalSync, schedulingv1alpha1.ProgressionFencing, "giveUpRelocate"},
	{schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionStarting, "restore"},
	{schedulingv1alpha1.ProgressionStarting, schedulingv1alpha1.ProgressionCompleted, "serve"},
}

// Allowed tells whether one decision may take a pair from one progression to the other. A
// progression may always stay as it is; otherwise the decision takes one or more
// Transitions, as it carries an action on as far as what it observes allows (a failover
// whose Location answers nowhere goes from the empty progression through Fencing to
// Restoring at once). An action that ends in a decision starts no other in it: a switch
// starts only from what the pair was before the decision.
func Allowed(from, to string) bool {
	reached := []string{from}
	for i := 0; i < len(reached); i++ {
		if reached[i] == to {
			return true
		}
		if ended := reached[i] == schedulingv1alpha1.ProgressionCompleted || reached[i] == schedulingv1alpha1.ProgressionCalledOff; i > 0 && ended {
			continue
		}
		for _, t := range Transitions {
			if t.From == reached[i] && !slices.Contains(reached, t.To) {
				reached = append(reached, t.To)
			}
		}
	}
	return false
}
