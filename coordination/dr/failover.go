package dr

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// switchAsked starts a failover or a relocate when one is declared or the active Location is
// lost, and the other Location can take over.
func (d *Decision) switchAsked(o Observation) bool {
	to := o.peer(d.Active)
	if !o.Locations[to].canTakeOver() {
		return false
	}
	var lastGeneration int64
	if d.Action != nil {
		lastGeneration = d.Action.Generation
	}
	declared := o.Pair.Declared != "" && o.Pair.Declared != d.Active && o.Pair.Generation > lastGeneration
	if !declared && !(o.lost(d.Active) && o.Pair.Automatic) {
		return false
	}
	if !declared && o.Brake.Engaged(o.Unreachable, o.Targets) {
		d.Waiting, d.WaitingReason = fmt.Sprintf("%s is lost, and %d of the hub's %d targets are Unreachable at once, more than the brake allows: the pair does not fail over by itself, as a split of the hub's network looks the same; declare a failover (kubectl custody failover) to go anyway",
			d.Active, o.Unreachable, o.Targets), schedulingv1alpha1.ReasonMassFailure
		return false
	}
	if k, why := o.unverified(d.Active); !declared && k != "" {
		d.Waiting, d.WaitingReason = fmt.Sprintf("%s is lost, but the fencing of its target %s is not verified (%s): the pair does not fail over by itself, as a Fence might not cut it off; correct the target's spec.fencing, fence it by hand, or declare a failover (kubectl custody failover) to go anyway",
			d.Active, k, why), schedulingv1alpha1.ReasonFencingUnverified
		return false
	}
	if v := o.unprotected(d.Active, nil); !declared && v != "" {
		// A failover restores each volume from its replica in the other Location; with none
		// there, the workloads would move to where their data is not. An admin who accepts
		// that declares the failover.
		d.Waiting = fmt.Sprintf("%s is lost, but %s has no replica of %s: a failover on its own starts no workload away from its data; declare one (kubectl custody failover) to go anyway",
			d.Active, to, v)
		return false
	}
	mode := o.Pair.Mode
	if !declared || !o.Locations[d.Active].anyReady() {
		mode = schedulingv1alpha1.Failover
	}
	if v := o.unreplicated(d.Active, to); mode == schedulingv1alpha1.Relocate && v != "" {
		// A relocate loses nothing: it waits until every volume replicates to the other
		// Location, as the pair protects again after a failover.
		d.Waiting = fmt.Sprintf("relocate to %s asked: waiting for %s to replicate to %s first", to, v, to)
		return false
	}
	d.start(o, mode, !declared, to)
	return true
}

// start begins a switch to the Location to, at its first step: a failover fences, a relocate
// stops the workloads; and carries it on as far as it goes.
func (d *Decision) start(o Observation, mode schedulingv1alpha1.SwitchMode, automatic bool, to string) {
	d.Action = &schedulingv1alpha1.PairAction{
		Mode: mode, Automatic: automatic, From: d.Active, To: to, Generation: o.Pair.Generation, StartTime: metav1.NewTime(o.Now),
	}
	o.startedBy(d.Action)
	if mode == schedulingv1alpha1.Relocate {
		d.moveTo(o, schedulingv1alpha1.ProgressionQuiescing)
	} else {
		d.moveTo(o, schedulingv1alpha1.ProgressionFencing)
	}
	d.step(o)
}

// fence is the Fencing step of a failover: it restores once every target of the Location it
// leaves that answers is fenced, and the destinations keep the images it restores from.
func (d *Decision) fence(o Observation) {
	a := d.Action
	switch fenced := o.Locations[a.From].fencedOrGone(); {
	case a.Automatic && !fenced:
		// The Location came back before it was fenced: it may hold the only way to
		// fence it (a Location of one member does), and it has every write since the
		// replicas.
		d.Active = a.From
		d.moveTo(o, schedulingv1alpha1.ProgressionCalledOff)
	case fenced && len(o.imagesNotKept()) == 0:
		// A sync may have completed since the replicas were last recorded. The failover
		// restores from the newest, kept.
		d.Replicas = o.newReplicas(o.Volumes, true)
		d.moveTo(o, schedulingv1alpha1.ProgressionRestoring)
	default:
		// A source that comes back may sync once more before it is fenced, and VolSync
		// then deletes the images before the new one: the destinations keep them.
		d.Replications = keepingImages(d.Replications)
	}
}

// awaitedFences says what the Fencing step waits for: the Fences of the targets that answer,
// then the destinations' keeping of their images.
func (o Observation) awaitedFences(a *schedulingv1alpha1.PairAction) string {
	var waiting []string
	for _, t := range o.Locations[a.From].Targets {
		if t.Ready && !t.Fence.Holds() {
			waiting = append(waiting, t.Key)
		}
	}
	if len(waiting) > 0 {
		return fmt.Sprintf("the Fences of %v to hold", waiting)
	}
	waiting = o.imagesNotKept()
	return fmt.Sprintf("%d destinations to keep their latest images from VolSync's rotation, the first %s", len(waiting), first(waiting))
}

// keepingImages asks each replication's destination to keep its images.
func keepingImages(ws []Want) []Want {
	for i := range ws {
		ws[i].KeepImages = true
	}
	return ws
}

// imagesNotKept are the volumes whose destination has a latest image not yet ready and kept
// from VolSync's rotation, each with its destination.
func (o Observation) imagesNotKept() []string {
	var out []string
	for _, v := range o.Volumes {
		if r := v.Replication; r != nil && r.Image != nil && (!r.ImageReady || !r.ImageKept) {
			out = append(out, v.Key()+" on "+r.Destination)
		}
	}
	return out
}

// canTakeOver: a target answers and no Fence holds it. A Location whose every target is still
// fenced after a failover away from it has not cleaned up, and takes no restore.
func (l Location) canTakeOver() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready && t.Fence == fencing.Unfenced })
}

// fencedOrGone: every target is fenced off its storage or does not answer.
func (l Location) fencedOrGone() bool {
	return !slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready && !t.Fence.Holds() })
}

// lost: the Location has targets, and every one has been Unreachable for the threshold while
// the other Location answered.
func (o Observation) lost(loc string) bool {
	at, ok := o.lostAt(loc)
	return ok && !o.Now.Before(at)
}

// untilLost is how long until the Location is lost, while every one of its targets is
// Unreachable and it is not lost yet; zero otherwise.
func (o Observation) untilLost(loc string) time.Duration {
	if at, ok := o.lostAt(loc); ok && at.After(o.Now) {
		return at.Sub(o.Now)
	}
	return 0
}

// lostAt is when the Location is lost if none of its targets answers again: the threshold
// after the last of them became Unreachable, or after the other Location answered again,
// whichever is later. An outage of the hub, or of the network between the hub and both
// Locations, cuts both off at once and says nothing of either. ok is false while a target
// of the Location, or none of the other, answers.
func (o Observation) lostAt(loc string) (at time.Time, ok bool) {
	l, witness := o.Locations[loc], o.Locations[o.peer(loc)]
	since, answers := witness.answersSince()
	if len(l.Targets) == 0 || !answers {
		return time.Time{}, false
	}
	for _, t := range l.Targets {
		if t.UnreachableSince.IsZero() {
			return time.Time{}, false
		}
		if t.UnreachableSince.After(since) {
			since = t.UnreachableSince
		}
	}
	return since.Add(o.Pair.Threshold), true
}

// answersSince is since when a target of the Location has answered without a break: the
// earliest time a target that is Ready now turned Ready. answers is false when none is Ready.
func (l Location) answersSince() (since time.Time, answers bool) {
	for _, t := range l.Targets {
		if t.Ready && (!answers || t.ReadySince.Before(since)) {
			since, answers = t.ReadySince, true
		}
	}
	return since, answers
}

// unverified is the first target of the Location, not fenced yet, whose fencing is not
// verified, and why; empty when there is none.
func (o Observation) unverified(loc string) (string, string) {
	for _, t := range o.Locations[loc].Targets {
		if t.Unverified != "" && t.Fence != fencing.Fenced {
			return t.Key, t.Unverified
		}
	}
	return "", ""
}
