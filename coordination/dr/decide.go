package dr

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// Decide is the pair's next step: the active Location, the action under way, the Fences to
// hold, the replications to keep and the replicas to record, and the pair's conditions.
func Decide(o Observation) Decision {
	d := Decision{Active: o.Active, Action: o.Action.DeepCopy()}
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
	}
	d.Fence = o.stillFenced(d.Action)
	if o.Pair.Automatic {
		d.recheckIn(o.untilLost(d.Active))
	}
	d.phase(o)
	d.conditions(o)
	return d
}

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
	lost := o.lost(d.Active)
	if !declared && !(lost && o.Pair.Automatic) {
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
	if mode == schedulingv1alpha1.Relocate {
		if v := o.unreplicated(d.Active, to); v != "" {
			// A relocate loses nothing: it waits until every volume replicates to the other
			// Location, as the pair protects again after a failover.
			d.Waiting = fmt.Sprintf("relocate to %s asked: waiting for %s to replicate to %s first", to, v, to)
			return false
		}
	}
	now := metav1.NewTime(o.Now)
	d.Action = &schedulingv1alpha1.PairAction{
		Mode: mode, Automatic: !declared, From: d.Active, To: to, Generation: o.Pair.Generation,
		Progression: schedulingv1alpha1.ProgressionFencing, ProgressionTime: &now, StartTime: now,
	}
	if mode == schedulingv1alpha1.Relocate {
		d.Action.Progression = schedulingv1alpha1.ProgressionQuiescing
	}
	d.Replications = o.current()
	d.step(o)
	return true
}

// step carries an action under way on as far as what is observed allows.
func (d *Decision) step(o Observation) {
	a := d.Action
	next := func(p string) {
		now := metav1.NewTime(o.Now)
		a.Progression, a.ProgressionTime = p, &now
	}
	d.Replications = o.current()
	if by, ok := o.relocateGivenUp(a); ok {
		a.Mode, a.Automatic = schedulingv1alpha1.Failover, by == ""
		if by == "spec" {
			a.Generation = o.Pair.Generation
		}
		next(schedulingv1alpha1.ProgressionFencing)
	}
	if a.Progression == schedulingv1alpha1.ProgressionFencing {
		switch fenced := o.Locations[a.From].fencedOrGone(); {
		case a.Automatic && !fenced:
			// The Location came back before it was fenced: it may hold the only way to
			// fence it (a Location of one member does), and it has every write since the
			// replicas.
			d.Active = a.From
			next(schedulingv1alpha1.ProgressionCalledOff)
			return
		case fenced && len(o.imagesNotKept()) == 0:
			// A sync may have completed since the replicas were last recorded. The failover
			// restores from the newest, kept.
			d.Replicas = o.newReplicas(o.Volumes, true)
			next(schedulingv1alpha1.ProgressionRestoring)
		default:
			// A source that comes back may sync once more before it is fenced, and VolSync
			// then deletes the images before the new one: the destinations keep them.
			d.Replications = keepingImages(d.Replications)
		}
	}
	if a.Progression == schedulingv1alpha1.ProgressionQuiescing && o.Quiesced {
		// The schedule ends only once the workloads stopped: a relocate whose workloads do
		// not stop leaves the volumes protected as before.
		d.Replications = o.triggered(stopTrigger(a))
		if wait, ok := o.stoppedSyncing(a); ok {
			next(schedulingv1alpha1.ProgressionFinalSync)
		} else {
			d.recheckIn(wait)
		}
	}
	if a.Progression == schedulingv1alpha1.ProgressionFinalSync {
		d.Replications = o.triggered(trigger(a))
		if o.finalSynced(a) {
			d.Replicas = o.newReplicas(o.Volumes, false)
			next(schedulingv1alpha1.ProgressionRestoring)
		}
	}
	if a.Progression == schedulingv1alpha1.ProgressionRestoring {
		d.Active = a.To
		if a.Mode == schedulingv1alpha1.Relocate {
			d.Replications = o.triggered(trigger(a)) // no scheduled sync replaces the image restored from
		}
		if d.Replicas == nil {
			// As when the step began: the record of the replicas taken then may have been
			// lost, and a claim not yet asked to restore takes the newest.
			d.Replicas = o.newReplicas(o.unasked(a), a.Mode == schedulingv1alpha1.Failover)
		}
		d.Restores, d.Unrestores = o.restores(a, d.Replicas)
		if o.restored(a, d.Replicas) {
			next(schedulingv1alpha1.ProgressionCompleted)
			now := metav1.NewTime(o.Now)
			a.CompletionTime, a.Duration = &now, &metav1.Duration{Duration: o.Now.Sub(a.StartTime.Time)}
			a.OldestReplicaTime = o.oldestRestored(a, d.Replicas)
		}
	}
	// A relocate's workloads stay stopped until every volume is back: a workload started
	// again where it ran would write past the last sync. A failover's stop while it fences
	// the Location it leaves, whose writes from then on are lost anyway.
	d.Quiesce = a.Progression != schedulingv1alpha1.ProgressionCompleted && (a.Mode == schedulingv1alpha1.Relocate || a.Progression == schedulingv1alpha1.ProgressionFencing)
}

// relocateGivenUp tells whether a relocate that has not restored yet becomes a failover, as
// it cannot go on without the Location it leaves: on its own once that Location is lost past
// the threshold, automatic failover is on and every volume has a replica where it goes, or
// when the spec now asks for a failover to the same Location (by is then "spec").
func (o Observation) relocateGivenUp(a *schedulingv1alpha1.PairAction) (by string, ok bool) {
	if a.Mode != schedulingv1alpha1.Relocate || (a.Progression != schedulingv1alpha1.ProgressionQuiescing && a.Progression != schedulingv1alpha1.ProgressionFinalSync) {
		return "", false
	}
	if o.Pair.Mode == schedulingv1alpha1.Failover && o.Pair.Declared == a.To && o.Pair.Generation > a.Generation {
		return "spec", true
	}
	return "", o.Pair.Automatic && o.lost(a.From) && o.Locations[a.To].canTakeOver() && o.unprotected(a.From, nil) == ""
}

// protect replicates every volume bound in the active Location to a target of the other
// one that no Fence holds; nothing while every target there is fenced, as after a failover
// away from it.
func (d *Decision) protect(o Observation) {
	to := o.Locations[o.peer(d.Active)]
	keys := to.destinations()
	if len(keys) == 0 {
		return
	}
	byKey := map[string]Target{}
	for _, t := range to.Targets {
		byKey[t.Key] = t
	}
	var protected []Volume
	for _, v := range o.Volumes {
		if v.Restore != nil && v.Bound && o.Locations[d.Active].has(v.Owner) {
			d.Unrestores = append(d.Unrestores, v.Key()) // restored, or back with its data
		}
		if !v.Bound || !o.Locations[d.Active].has(v.Owner) {
			// A volume on its way (moving, or its owner lost) keeps the replication it has:
			// its replicas are what a failover restores it from.
			if r := v.Replication; r != nil {
				d.Replications = append(d.Replications, Want{Namespace: v.Namespace, Claim: v.Claim, Source: r.Source, Destination: r.Destination})
			}
			continue
		}
		w := Want{Namespace: v.Namespace, Claim: v.Claim, Source: v.Owner, Destination: Destination(v.Namespace, keys)}
		if class, ok := byKey[w.Destination].holds(v.StorageClass); !ok {
			if d.Unmapped == nil {
				d.Unmapped = map[string]string{}
			}
			d.Unmapped[v.Key()] = fmt.Sprintf("target %s has no storage class %s", w.Destination, class)
			continue
		}
		d.Replications = append(d.Replications, w)
		if r := v.Replication; r != nil && r.Source == w.Source && r.Destination == w.Destination {
			protected = append(protected, v)
		}
	}
	d.Replicas = o.newReplicas(protected, true)
}

// phase is Protecting, or the action's phase while it is under way, and FailedOver or
// Relocated after it until every volume has a replica taken since it completed.
func (d *Decision) phase(o Observation) {
	a := d.Action
	switch {
	case a == nil || a.Progression == schedulingv1alpha1.ProgressionCalledOff:
		d.Phase = schedulingv1alpha1.PairProtecting
	case !a.Over() && a.Mode == schedulingv1alpha1.Failover:
		d.Phase = schedulingv1alpha1.PairFailingOver
	case !a.Over():
		d.Phase = schedulingv1alpha1.PairRelocating
	case o.protectedFrom(d.Active, d.Replicas):
		d.Phase = schedulingv1alpha1.PairProtecting
	case a.Mode == schedulingv1alpha1.Failover:
		d.Phase = schedulingv1alpha1.PairFailedOver
	default:
		d.Phase = schedulingv1alpha1.PairRelocated
	}
}

// conditions are Available, PeerReady and DataProtected, with the volume counts.
func (d *Decision) conditions(o Observation) {
	set := func(t string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		meta.SetStatusCondition(&d.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg})
	}
	unknown := func(reason, msg string) {
		for _, t := range []string{schedulingv1alpha1.ConditionAvailable, schedulingv1alpha1.ConditionPeerReady, schedulingv1alpha1.ConditionDataProtected} {
			meta.SetStatusCondition(&d.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionUnknown, Reason: reason, Message: msg})
		}
	}
	for _, name := range []string{o.Pair.Primary, o.Pair.Secondary} {
		if !o.Locations[name].Found {
			unknown(schedulingv1alpha1.ReasonLocationNotFound, "Location "+name+" of the pair does not exist or its selector does not parse")
			return
		}
	}
	if key := o.overlap(); key != "" {
		unknown(schedulingv1alpha1.ReasonLocationsOverlap, fmt.Sprintf("target %s is in both Location %s and Location %s: a pair needs two Locations apart", key, o.Pair.Primary, o.Pair.Secondary))
		return
	}
	active, peer := o.Locations[d.Active], o.Locations[o.peer(d.Active)]
	if active.anyReady() {
		set(schedulingv1alpha1.ConditionAvailable, true, schedulingv1alpha1.ReasonLocationAvailable, "a target of "+active.Name+" answers")
	} else {
		set(schedulingv1alpha1.ConditionAvailable, false, schedulingv1alpha1.ReasonLocationUnavailable, "no target of "+active.Name+" answers")
	}
	switch {
	case peer.fenced():
		set(schedulingv1alpha1.ConditionPeerReady, false, schedulingv1alpha1.ReasonPeerFenced, "a target of "+peer.Name+" is still fenced: it returns, removes what the hub no longer gives it, and is unfenced first")
	case !peer.anyReady():
		set(schedulingv1alpha1.ConditionPeerReady, false, schedulingv1alpha1.ReasonLocationUnavailable, "no target of "+peer.Name+" answers")
	default:
		set(schedulingv1alpha1.ConditionPeerReady, true, schedulingv1alpha1.ReasonPeerReady, peer.Name+" can take over")
	}
	ok, reason, msg := d.protection(o)
	set(schedulingv1alpha1.ConditionDataProtected, ok, reason, msg)
	switch a := d.Action; {
	case a != nil && !a.Over():
		set(schedulingv1alpha1.ConditionProgressing, true, a.Progression, d.waitingFor(o))
	case d.Waiting != "":
		set(schedulingv1alpha1.ConditionProgressing, false, schedulingv1alpha1.ReasonWaitingForReplicas, d.Waiting)
	case a != nil && a.Progression == schedulingv1alpha1.ProgressionCalledOff:
		set(schedulingv1alpha1.ConditionProgressing, false, schedulingv1alpha1.ReasonFailoverCalledOff,
			fmt.Sprintf("the failover from %s to %s was called off at %s: %s answered again before it was fenced, and stays active",
				a.From, a.To, a.ProgressionTime.UTC().Format(time.RFC3339), a.From))
	default:
		set(schedulingv1alpha1.ConditionProgressing, false, schedulingv1alpha1.ReasonIdle, "no failover or relocate is under way")
	}
}

// waitingFor says what the step of the action under way waits for.
func (d *Decision) waitingFor(o Observation) string {
	a := d.Action
	var waiting []string
	say := func(what string) string {
		return fmt.Sprintf("%s %s to %s: waiting for %s", strings.ToLower(string(a.Mode)), a.From, a.To, what)
	}
	switch a.Progression {
	case schedulingv1alpha1.ProgressionFencing:
		for _, t := range o.Locations[a.From].Targets {
			if t.Ready && !t.Fence.Holds() {
				waiting = append(waiting, t.Key)
			}
		}
		if len(waiting) > 0 {
			return say(fmt.Sprintf("the Fences of %v to hold", waiting))
		}
		waiting = o.imagesNotKept()
		return say(fmt.Sprintf("%d destinations to keep their latest images from VolSync's rotation, the first %s", len(waiting), first(waiting)))
	case schedulingv1alpha1.ProgressionQuiescing, schedulingv1alpha1.ProgressionFinalSync:
		if !o.Locations[a.From].anyReady() {
			return say(fmt.Sprintf("a target of %s to answer; the relocate becomes a failover once %s is lost for the threshold with automatic failover on, or when spec.switchMode asks for a failover", a.From, a.From))
		}
	}
	switch a.Progression {
	case schedulingv1alpha1.ProgressionQuiescing:
		for _, v := range o.Volumes {
			if r := v.Replication; r != nil && !r.Quiesced {
				waiting = append(waiting, v.Key()+" on "+r.Source)
			}
		}
		if !o.Quiesced {
			return say(fmt.Sprintf("%d volumes to be used by no pod, the first %s", len(waiting), first(waiting)))
		}
		waiting = nil
		for _, v := range o.Volumes {
			if r := v.Replication; r != nil && !stopSynced(r, a) {
				waiting = append(waiting, v.Key())
			}
		}
		if len(waiting) == 0 {
			return say(fmt.Sprintf("%s after the sync that ended the schedule of every volume, before the last sync", syncGap))
		}
		return say(fmt.Sprintf("the sync that ends the schedule of %d volumes, the first %s", len(waiting), first(waiting)))
	case schedulingv1alpha1.ProgressionFinalSync:
		for _, v := range o.Volumes {
			if r := v.Replication; r != nil && (r.LastManualSync != trigger(a) || !r.ImageReady) {
				waiting = append(waiting, v.Key())
			}
		}
		return say(fmt.Sprintf("the last sync of %d volumes, the first %s", len(waiting), first(waiting)))
	}
	for _, v := range o.Volumes {
		if v.Replica != nil && (!v.Bound || !o.Locations[a.To].has(v.Owner)) {
			waiting = append(waiting, v.Key())
		}
	}
	return say(fmt.Sprintf("%d volumes to be restored and bound in %s, the first %s", len(waiting), a.To, first(waiting)))
}

func first(s []string) string {
	if len(s) == 0 {
		return "<none>"
	}
	return s[0]
}

// protection counts the replicated volumes and tells whether each has a replica at most
// two intervals old: one between syncs and one for the sync.
func (d *Decision) protection(o Observation) (bool, string, string) {
	replicas := map[string]*storagev1alpha1.Replica{}
	failed := map[string]string{}
	for _, v := range o.Volumes {
		replicas[v.Key()] = v.Replica
		if r, ok := d.Replicas[v.Key()]; ok {
			replicas[v.Key()] = &r
		}
		if v.Replication != nil && v.Replication.Failed {
			failed[v.Key()] = v.Replication.Message
		}
	}
	var missing, lagging, failing []string
	d.VolumeConditions = map[string]metav1.Condition{}
	volume := func(k string, ok bool, reason, msg string) {
		s := metav1.ConditionFalse
		if ok {
			s = metav1.ConditionTrue
		}
		d.VolumeConditions[k] = metav1.Condition{Type: storagev1alpha1.ConditionReplicated, Status: s, Reason: reason, Message: msg}
	}
	for _, w := range d.Replications {
		k := w.Namespace + "/" + w.Claim
		d.Volumes++
		r := replicas[k]
		if r != nil && !o.together(r.Target, w.Destination) {
			// The replica a switch restored the volume from is in the Location it runs in now:
			// it protects nothing until the replication back has synced.
			r = nil
		}
		switch {
		case r == nil:
			missing = append(missing, k)
			volume(k, false, schedulingv1alpha1.ReasonNoReplica, fmt.Sprintf("no replica on %s yet", w.Destination))
		case o.Now.Sub(r.Time.Time) > 2*o.Pair.Interval:
			lagging = append(lagging, k)
			volume(k, false, schedulingv1alpha1.ReasonReplicationLagging, fmt.Sprintf("the latest replica, %s on %s, is from %s: older than two intervals (%s)",
				r.Snapshot, r.Target, r.Time.UTC().Format(time.RFC3339), 2*o.Pair.Interval))
		default:
			d.Protected++
			d.recheckIn(r.Time.Add(2 * o.Pair.Interval).Sub(o.Now))
			volume(k, true, schedulingv1alpha1.ReasonReplicated, fmt.Sprintf("latest replica %s on %s, from %s", r.Snapshot, r.Target, r.Time.UTC().Format(time.RFC3339)))
		}
		if r != nil && (d.OldestLastSync.IsZero() || r.Time.Time.Before(d.OldestLastSync)) {
			d.OldestLastSync = r.Time.Time
		}
		if m, ok := failed[k]; ok {
			failing = append(failing, k+": "+m)
			volume(k, false, schedulingv1alpha1.ReasonSyncFailed, fmt.Sprintf("the last sync from %s to %s failed, and is retried: %s", w.Source, w.Destination, m))
		}
	}
	for k, why := range d.Unmapped {
		volume(k, false, schedulingv1alpha1.ReasonStorageClassUnmapped, "the volume cannot replicate: "+why)
	}
	switch {
	case len(d.Unmapped) > 0:
		k := slices.Sorted(maps.Keys(d.Unmapped))[0]
		return false, schedulingv1alpha1.ReasonStorageClassUnmapped, fmt.Sprintf("%d volumes cannot replicate; the first, %s: %s", len(d.Unmapped), k, d.Unmapped[k])
	case len(failing) > 0:
		return false, schedulingv1alpha1.ReasonSyncFailed, fmt.Sprintf("%d volumes failed their last sync; the first, %s", len(failing), failing[0])
	case len(missing) > 0:
		return false, schedulingv1alpha1.ReasonNoReplica, fmt.Sprintf("%d of %d volumes have no replica yet, the first %s", len(missing), d.Volumes, missing[0])
	case len(lagging) > 0:
		return false, schedulingv1alpha1.ReasonReplicationLagging, fmt.Sprintf("%d of %d volumes have no replica from the last two intervals, the first %s", len(lagging), d.Volumes, lagging[0])
	case d.Volumes == 0:
		return false, schedulingv1alpha1.ReasonNoVolumes, "no volume replicates: none is bound in the active Location, or the other Location cannot take replicas"
	}
	return true, schedulingv1alpha1.ReasonReplicated, fmt.Sprintf("every one of %d volumes has a replica from the last two intervals", d.Volumes)
}

// current are the replications as they are: an action keeps them until it completed, so
// that no replica it may restore from goes with its ReplicationDestination.
func (o Observation) current() []Want {
	var out []Want
	for _, v := range o.Volumes {
		if r := v.Replication; r != nil {
			out = append(out, Want{Namespace: v.Namespace, Claim: v.Claim, Source: r.Source, Destination: r.Destination})
		}
	}
	return out
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

// newReplicas are the ready images of the volumes that differ from what their records say.
// With newerOnly, an image older than the recorded replica is not taken.
func (o Observation) newReplicas(vs []Volume, newerOnly bool) map[string]storagev1alpha1.Replica {
	out := map[string]storagev1alpha1.Replica{}
	for _, v := range vs {
		r := v.Replication
		if r == nil || !r.ImageReady || r.Image == nil {
			continue
		}
		if v.Replica != nil && (same(*v.Replica, *r.Image) || newerOnly && r.Image.Time.Before(&v.Replica.Time)) {
			continue
		}
		out[v.Key()] = *r.Image
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// same tells whether two replicas are one: the same snapshot of the same target, taken at
// the same instant, however its time was decoded.
func same(a, b storagev1alpha1.Replica) bool {
	return a.Target == b.Target && a.Snapshot == b.Snapshot && a.Time.Equal(&b.Time)
}

// restores are the restore-from annotations a switch needs where the claims do not carry
// them yet: a volume with a replica (the one just taken, for a relocate) is restored from it;
// one that was in the Location the switch leaves and has none is told so, and waits rather
// than start empty. A claim made since in the new Location needs none.
func (o Observation) restores(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) (map[string]string, []string) {
	out := map[string]string{}
	var drop []string
	for _, v := range o.Volumes {
		if o.asked(v, a) {
			continue // a restore asked of the Location switched to is not changed midway
		}
		r := o.usable(v, a, taken)
		var want string
		switch {
		case r != nil:
			want = r.Target + "/" + r.Snapshot
		case !o.Locations[a.From].has(v.Owner):
			// Already where the switch goes (a claim that waited with no replica, back with
			// its data): any restore asked before is over.
			if v.Restore != nil {
				drop = append(drop, v.Key())
			}
			continue
		}
		if v.Restore == nil || *v.Restore != want {
			out[v.Key()] = want
		}
	}
	if len(out) == 0 {
		out = nil
	}
	return out, drop
}

// asked: the claim's restore annotation already names a replica in the Location the switch
// goes to.
func (o Observation) asked(v Volume, a *schedulingv1alpha1.PairAction) bool {
	if v.Restore == nil {
		return false
	}
	key, snapshot, _ := strings.Cut(*v.Restore, "/")
	return snapshot != "" && o.Locations[a.To].has(key)
}

// unasked are the volumes not yet asked to restore from a replica in the Location the switch
// goes to.
func (o Observation) unasked(a *schedulingv1alpha1.PairAction) []Volume {
	return slices.DeleteFunc(slices.Clone(o.Volumes), func(v Volume) bool { return o.asked(v, a) })
}

// usable is the replica a switch restores the volume from: the one just taken, else the one
// recorded, when it is in the Location switched to; nil when there is none.
func (o Observation) usable(v Volume, a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) *storagev1alpha1.Replica {
	r := v.Replica
	if n, ok := taken[v.Key()]; ok {
		r = &n
	}
	if r == nil || !o.Locations[a.To].has(r.Target) {
		return nil // none, or one from before an earlier switch, in the Location left
	}
	return r
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

// restored tells whether every volume with a replica is bound on a target of loc.
func (o Observation) restored(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) bool {
	return !slices.ContainsFunc(o.Volumes, func(v Volume) bool {
		return o.usable(v, a, taken) != nil && (!v.Bound || !o.Locations[a.To].has(v.Owner))
	})
}

// oldestRestored is the time of the oldest replica a volume of loc came back from.
func (o Observation) oldestRestored(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) *metav1.Time {
	var oldest *metav1.Time
	for _, v := range o.Volumes {
		if r := o.usable(v, a, taken); r != nil && o.Locations[a.To].has(v.Owner) && (oldest == nil || r.Time.Before(oldest)) {
			t := r.Time
			oldest = &t
		}
	}
	return oldest
}

// protectedFrom tells whether every volume bound at active has a replica in the other
// Location.
func (o Observation) protectedFrom(active string, recorded map[string]storagev1alpha1.Replica) bool {
	return o.unprotected(active, recorded) == ""
}

// unprotected is a volume bound at active with no replica in the other Location, "" when
// there is none. A switch restores each volume from a replica in the Location it goes to,
// which the record names, so one in the other Location was taken since: it is the reverse
// replication's. Replica times, to the second, cannot tell a sync that began as the switch
// completed.
func (o Observation) unprotected(active string, recorded map[string]storagev1alpha1.Replica) string {
	peer := o.Locations[o.peer(active)]
	for _, v := range o.Volumes {
		if !v.Bound || !o.Locations[active].has(v.Owner) {
			continue
		}
		r := v.Replica
		if n, ok := recorded[v.Key()]; ok {
			r = &n
		}
		if r == nil || !peer.has(r.Target) {
			return v.Key()
		}
	}
	return ""
}

// stillFenced are the targets of the Location a failover left that have not yet reported
// clean since it completed, and since they came back: their Fences hold until then. A
// failover called off holds none.
func (o Observation) stillFenced(a *schedulingv1alpha1.PairAction) []string {
	if a == nil || a.Mode != schedulingv1alpha1.Failover || a.Progression == schedulingv1alpha1.ProgressionCalledOff {
		return nil
	}
	var out []string
	for _, t := range o.Locations[a.From].Targets {
		if a.CompletionTime == nil || !t.Ready || !t.Clean || !t.Reported.After(a.CompletionTime.Time) || !t.Reported.After(t.ReadySince) {
			out = append(out, t.Key)
		}
	}
	return out
}

func (o Observation) peer(loc string) string {
	if loc == o.Pair.Primary {
		return o.Pair.Secondary
	}
	return o.Pair.Primary
}

// overlap is a target in both Locations of the pair, "" when there is none.
func (o Observation) overlap() string {
	for _, t := range o.Locations[o.Pair.Primary].Targets {
		if o.Locations[o.Pair.Secondary].has(t.Key) {
			return t.Key
		}
	}
	return ""
}

// holds tells whether the target has the storage class a claim names (nil: the default
// class), and says which class it looked for.
func (t Target) holds(class *string) (string, bool) {
	if class == nil {
		return "marked default", t.DefaultClass != ""
	}
	return *class, slices.Contains(t.Classes, *class)
}

func (l Location) anyReady() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready })
}

// canTakeOver: a target answers and no Fence holds it. A Location whose every target is still
// fenced after a failover away from it has not cleaned up, and takes no restore.
func (l Location) canTakeOver() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready && t.Fence == fencing.Unfenced })
}

// together tells whether two targets are in one Location of the pair.
func (o Observation) together(a, b string) bool {
	for _, name := range []string{o.Pair.Primary, o.Pair.Secondary} {
		if l := o.Locations[name]; l.has(a) && l.has(b) {
			return true
		}
	}
	return false
}

func (l Location) has(key string) bool {
	return key != "" && slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Key == key })
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

// recheckIn asks for a look at the pair again after wait, unless one is asked for sooner.
func (d *Decision) recheckIn(wait time.Duration) {
	if wait > 0 && (d.Recheck == 0 || wait < d.Recheck) {
		d.Recheck = wait
	}
}

// destinations are the keys of the targets a volume may replicate to: those that no Fence
// holds, as a fenced member takes no replica until it returned clean; of those, the ones not
// cordoned, as a switch restores a volume where its replica is, or all when all are cordoned.
func (l Location) destinations() []string {
	var keys, cordoned []string
	for _, t := range l.Targets {
		switch {
		case t.Fence != fencing.Unfenced:
		case t.Cordoned:
			cordoned = append(cordoned, t.Key)
		default:
			keys = append(keys, t.Key)
		}
	}
	if len(keys) == 0 {
		return cordoned
	}
	return keys
}

// fencedOrGone: every target is fenced off its storage or does not answer.
func (l Location) fencedOrGone() bool {
	return !slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready && !t.Fence.Holds() })
}

// fenced: a target still has a Fence, in any state.
func (l Location) fenced() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Fence != fencing.Unfenced })
}
