package dr

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// conditions are Available, PeerReady, DataProtected and Progressing, with the volume counts.
func (d *Decision) conditions(o Observation) {
	if reason, msg := o.unknownLocations(); reason != "" {
		for _, t := range []string{schedulingv1alpha1.ConditionAvailable, schedulingv1alpha1.ConditionPeerReady, schedulingv1alpha1.ConditionDataProtected} {
			meta.SetStatusCondition(&d.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: msg})
		}
		return
	}
	active, peer := o.Locations[d.Active], o.Locations[o.peer(d.Active)]
	if active.anyReady() {
		d.condition(schedulingv1alpha1.ConditionAvailable, true, schedulingv1alpha1.ReasonLocationAvailable, "a target of "+active.Name+" answers")
	} else {
		d.condition(schedulingv1alpha1.ConditionAvailable, false, schedulingv1alpha1.ReasonLocationUnavailable, "no target of "+active.Name+" answers")
	}
	switch {
	case peer.fenced():
		d.condition(schedulingv1alpha1.ConditionPeerReady, false, schedulingv1alpha1.ReasonPeerFenced, "a target of "+peer.Name+" is still fenced: it returns, removes what the hub no longer gives it, and is unfenced first")
	case !peer.anyReady():
		d.condition(schedulingv1alpha1.ConditionPeerReady, false, schedulingv1alpha1.ReasonLocationUnavailable, "no target of "+peer.Name+" answers")
	default:
		d.condition(schedulingv1alpha1.ConditionPeerReady, true, schedulingv1alpha1.ReasonPeerReady, peer.Name+" can take over")
	}
	ok, reason, msg := d.protection(o)
	d.condition(schedulingv1alpha1.ConditionDataProtected, ok, reason, msg)
	d.progressing(o)
}

// unknownLocations says why the pair's Locations cannot be told apart: a Location is missing
// or its selector does not parse, or a target is in both. The reason is "" when they can.
func (o Observation) unknownLocations() (reason, msg string) {
	for _, name := range []string{o.Pair.Primary, o.Pair.Secondary} {
		if !o.Locations[name].Found {
			return schedulingv1alpha1.ReasonLocationNotFound, "Location " + name + " of the pair does not exist or its selector does not parse"
		}
	}
	if key := o.overlap(); key != "" {
		return schedulingv1alpha1.ReasonLocationsOverlap, fmt.Sprintf("target %s is in both Location %s and Location %s: a pair needs two Locations apart", key, o.Pair.Primary, o.Pair.Secondary)
	}
	return "", ""
}

// progressing is the Progressing condition: the step of the action under way and what it
// waits for, why a switch asked for has not started, or how the last action ended.
func (d *Decision) progressing(o Observation) {
	switch a := d.Action; {
	case a != nil && !a.Over():
		d.condition(schedulingv1alpha1.ConditionProgressing, true, a.Progression, d.waitingFor(o))
	case d.Waiting != "":
		reason := d.WaitingReason
		if reason == "" {
			reason = schedulingv1alpha1.ReasonWaitingForReplicas
		}
		d.condition(schedulingv1alpha1.ConditionProgressing, false, reason, d.Waiting)
	case a != nil && a.Progression == schedulingv1alpha1.ProgressionCalledOff:
		d.condition(schedulingv1alpha1.ConditionProgressing, false, schedulingv1alpha1.ReasonFailoverCalledOff,
			fmt.Sprintf("the failover from %s to %s was called off at %s: %s answered again before it was fenced, and stays active",
				a.From, a.To, a.ProgressionTime.UTC().Format(time.RFC3339), a.From))
	default:
		d.condition(schedulingv1alpha1.ConditionProgressing, false, schedulingv1alpha1.ReasonIdle, "no failover or relocate is under way")
	}
}

// waitingFor says what the step of the action under way waits for.
func (d *Decision) waitingFor(o Observation) string {
	a := d.Action
	var what string
	switch a.Progression {
	case schedulingv1alpha1.ProgressionFencing:
		what = o.awaitedFences(a)
	case schedulingv1alpha1.ProgressionQuiescing:
		what = o.awaitedQuiesce(a)
	case schedulingv1alpha1.ProgressionFinalSync:
		what = o.awaitedFinalSync(a)
	case schedulingv1alpha1.ProgressionStarting:
		what = o.awaitedWorkloads(a)
	default:
		what = o.awaitedRestores(a)
	}
	return fmt.Sprintf("%s %s to %s: waiting for %s", strings.ToLower(string(a.Mode)), a.From, a.To, what)
}

// condition sets one of the pair's conditions, True when ok.
func (d *Decision) condition(t string, ok bool, reason, msg string) {
	meta.SetStatusCondition(&d.Conditions, metav1.Condition{Type: t, Status: status(ok), Reason: reason, Message: msg})
}

func status(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// first is the first of the volumes a message names, or says there is none.
func first(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return s[0]
}
