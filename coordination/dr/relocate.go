package dr

import (
	"fmt"
	"strconv"
	"time"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// giveUpRelocate turns a relocate that cannot go on without the Location it leaves into a
// failover, which begins by fencing that Location (relocateGivenUp says when).
func (d *Decision) giveUpRelocate(o Observation) {
	a := d.Action
	by, ok := o.relocateGivenUp(a)
	if !ok {
		return
	}
	a.Mode, a.Automatic = schedulingv1alpha1.Failover, by == ""
	if by == "spec" {
		a.Generation = o.Pair.Generation
	}
	d.moveTo(o, schedulingv1alpha1.ProgressionFencing)
}

// relocateGivenUp tells whether a relocate that has not restored yet becomes a failover, as
// it cannot go on without the Location it leaves: on its own once that Location is lost past
// the threshold, automatic failover is on, every volume has a replica where it goes and the
// brake on mass failure is not engaged, or when the spec now asks for a failover to the same
// Location (by is then "spec").
func (o Observation) relocateGivenUp(a *schedulingv1alpha1.PairAction) (by string, ok bool) {
	if a.Mode != schedulingv1alpha1.Relocate || (a.Progression != schedulingv1alpha1.ProgressionQuiescing && a.Progression != schedulingv1alpha1.ProgressionFinalSync) {
		return "", false
	}
	if o.Pair.Mode == schedulingv1alpha1.Failover && o.Pair.Declared == a.To && o.Pair.Generation > a.Generation {
		return "spec", true
	}
	return "", o.Pair.Automatic && o.lost(a.From) && o.Locations[a.To].canTakeOver() && o.unprotected(a.From, nil) == "" &&
		!o.Brake.Engaged(o.Unreachable, o.Targets)
}

// quiesce is the Quiescing step of a relocate: once the workloads stopped, each source syncs
// once more and leaves its schedule, and the last sync is asked for the gap after.
func (d *Decision) quiesce(o Observation) {
	if !o.Quiesced {
		// The schedule ends only once the workloads stopped: a relocate whose workloads do
		// not stop leaves the volumes protected as before.
		return
	}
	a := d.Action
	d.Replications = o.triggered(stopTrigger(a))
	if wait, ok := o.stoppedSyncing(a); ok {
		d.moveTo(o, schedulingv1alpha1.ProgressionFinalSync)
	} else {
		d.recheckIn(wait)
	}
}

// finalSync is the FinalSync step of a relocate: once the last sync of every volume is in a
// ready snapshot, the snapshots are recorded and the other Location restores from them.
func (d *Decision) finalSync(o Observation) {
	a := d.Action
	d.Replications = o.triggered(trigger(a))
	if o.finalSynced(a) {
		d.Replicas = o.newReplicas(o.Volumes, false)
		d.moveTo(o, schedulingv1alpha1.ProgressionRestoring)
	}
}

// awaitedQuiesce says what the Quiescing step waits for: the volumes still in use, then the
// sync that ends each schedule, then the gap before the last sync.
func (o Observation) awaitedQuiesce(a *schedulingv1alpha1.PairAction) string {
	if what, silent := o.relocatedFromSilent(a); silent {
		return what
	}
	var waiting []string
	for _, v := range o.Volumes {
		if r := v.Replication; r != nil && !r.Quiesced {
			waiting = append(waiting, v.Key()+" on "+r.Source)
		}
	}
	if !o.Quiesced {
		return fmt.Sprintf("%d volumes to be used by no pod, the first %s", len(waiting), first(waiting))
	}
	waiting = nil
	for _, v := range o.Volumes {
		if r := v.Replication; r != nil && !stopSynced(r, a) {
			waiting = append(waiting, v.Key())
		}
	}
	if len(waiting) == 0 {
		return fmt.Sprintf("%s after the sync that ended the schedule of every volume, before the last sync", syncGap)
	}
	return fmt.Sprintf("the sync that ends the schedule of %d volumes, the first %s", len(waiting), first(waiting))
}

// awaitedFinalSync says what the FinalSync step waits for: the volumes whose last sync is
// not yet in a ready snapshot.
func (o Observation) awaitedFinalSync(a *schedulingv1alpha1.PairAction) string {
	if what, silent := o.relocatedFromSilent(a); silent {
		return what
	}
	var waiting []string
	for _, v := range o.Volumes {
		if r := v.Replication; r != nil && (r.LastManualSync != trigger(a) || !r.ImageReady) {
			waiting = append(waiting, v.Key())
		}
	}
	return fmt.Sprintf("the last sync of %d volumes, the first %s", len(waiting), first(waiting))
}

// relocatedFromSilent says, while no target of the Location a relocate leaves answers, that
// the relocate waits for one, and how it becomes a failover instead.
func (o Observation) relocatedFromSilent(a *schedulingv1alpha1.PairAction) (string, bool) {
	if o.Locations[a.From].anyReady() {
		return "", false
	}
	return fmt.Sprintf("a target of %s to answer; the relocate becomes a failover once %s is lost for the threshold with automatic failover on, or when spec.switchMode asks for a failover", a.From, a.From), true
}

// trigger is the manual trigger of a relocate's last sync.
func trigger(a *schedulingv1alpha1.PairAction) string {
	return "relocate-" + strconv.FormatInt(a.StartTime.Unix(), 10)
}

// stopTrigger is the manual trigger a relocate sets while its workloads stop: each source
// syncs once more, after any sync under way, and then no longer on its schedule.
func stopTrigger(a *schedulingv1alpha1.PairAction) string { return trigger(a) + "-stop" }

// syncGap is how long after the sync before it a relocate asks for its last sync. The API
// keeps times to the second: with the gap, the destination's report of the last sync is told
// apart from its report of the one before, which comes at most a moment after that sync
// completed at its source.
const syncGap = 3 * time.Second

// triggered are the current replications, synced on the manual trigger.
func (o Observation) triggered(manual string) []Want {
	out := o.current()
	for i := range out {
		out[i].ManualTrigger = manual
	}
	return out
}

// stoppedSyncing tells whether every source answered the relocate's stop trigger, its
// destination reported that sync with a ready image, and both did the gap ago; else how long
// until the last one did. A member's time ahead of the hub's counts as the hub's.
func (o Observation) stoppedSyncing(a *schedulingv1alpha1.PairAction) (time.Duration, bool) {
	var wait time.Duration
	for _, v := range o.Volumes {
		r := v.Replication
		if r == nil {
			continue
		}
		if !stopSynced(r, a) {
			return 0, false
		}
		last := r.SourceLastSync
		if r.DestinationLastSync.After(last) {
			last = r.DestinationLastSync
		}
		if last.After(o.Now) {
			last = o.Now
		}
		wait = max(wait, last.Add(syncGap).Sub(o.Now))
	}
	return wait, wait <= 0
}

// stopSynced tells whether the source answered the relocate's stop trigger and its
// destination reported that sync with a ready image.
func stopSynced(r *Replication, a *schedulingv1alpha1.PairAction) bool {
	return r.LastManualSync == stopTrigger(a) && r.ImageReady && destinationSynced(r)
}

// destinationSynced tells whether the destination's last sync completed after the source's
// last sync started, to the second, as the API keeps times: the source's start is its
// completion, kept to the second below, less the sync's duration.
func destinationSynced(r *Replication) bool {
	return !r.DestinationLastSync.Before(r.SourceLastSyncStart.Truncate(time.Second))
}

// finalSynced tells whether every replication answered the relocate's trigger with a ready
// snapshot that a destination sync completed after the source's last sync started. The
// source reports its manual sync before the snapshot is ready, so both are waited for.
func (o Observation) finalSynced(a *schedulingv1alpha1.PairAction) bool {
	for _, v := range o.Volumes {
		r := v.Replication
		if r == nil {
			continue
		}
		if r.LastManualSync != trigger(a) || !r.ImageReady || r.Image == nil || !destinationSynced(r) {
			return false
		}
	}
	return true
}

// unreplicated is a volume bound in from that has no ready replica in to, "" when every one
// has.
func (o Observation) unreplicated(from, to string) string {
	for _, v := range o.Volumes {
		if !v.Bound || !o.Locations[from].has(v.Owner) {
			continue
		}
		if r := v.Replication; r == nil || !o.Locations[to].has(r.Destination) || v.Replica == nil || !o.Locations[to].has(v.Replica.Target) {
			return v.Key()
		}
	}
	return ""
}
