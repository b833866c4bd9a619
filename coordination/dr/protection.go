package dr

import (
	"fmt"
	"maps"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

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
	kept := keptDestinations(o.Volumes, keys)
	var protected []Volume
	for _, v := range o.Volumes {
		if v.Restore != nil && v.Bound && o.Locations[d.Active].has(v.Owner) {
			d.Unrestores = append(d.Unrestores, v.Key()) // restored, or back with its data
		}
		if !v.Bound || !o.Locations[d.Active].has(v.Owner) {
			// A volume on its way (moving, or its owner lost) keeps the replication it has:
			// its replicas are what a failover restores it from.
			if v.Replication != nil {
				d.Replications = append(d.Replications, keep(v))
			}
			continue
		}
		dest, ok := kept[v.Namespace]
		if !ok {
			dest = Destination(v.Namespace, keys)
		}
		w := Want{Namespace: v.Namespace, Claim: v.Claim, Source: v.Owner, Destination: dest}
		class := o.Pair.ClassAt(v.StorageClass, to.Name)
		if name, ok := byKey[w.Destination].holds(class); !ok {
			if d.Unmapped == nil {
				d.Unmapped = map[string]string{}
			}
			d.Unmapped[v.Key()] = fmt.Sprintf("target %s has no storage class %s; map it to a class of Location %s in the pair's spec.storageClassMap", w.Destination, name, to.Name)
			continue
		}
		if !sameClass(class, v.StorageClass) {
			w.Class = class
		}
		d.Replications = append(d.Replications, w)
		if r := v.Replication; r != nil && r.Source == w.Source && r.Destination == w.Destination {
			protected = append(protected, v)
		}
	}
	d.Replicas = o.newReplicas(protected, true)
}

// keptDestinations are, by namespace, the targets among keys that a replication of the
// namespace goes to already (the first by name, should they differ): a namespace keeps its
// destination while it can, as a new one would restart every volume's first sync there. So
// the targets of a Location that returns take the replicas as their Fences are lifted, one
// by one, and keep them: those of the first lifted stay there.
func keptDestinations(volumes []Volume, keys []string) map[string]string {
	out := map[string]string{}
	for _, v := range volumes {
		r := v.Replication
		if r == nil || !slices.Contains(keys, r.Destination) {
			continue
		}
		if d, ok := out[v.Namespace]; !ok || r.Destination < d {
			out[v.Namespace] = r.Destination
		}
	}
	return out
}

// protection counts the replicated volumes, gives each its Replicated condition, and tells
// whether each has a replica at most two intervals old: one between syncs and one for the
// sync.
func (d *Decision) protection(o Observation) (bool, string, string) {
	replicas, failed := d.latest(o)
	var missing, lagging, failing []string
	d.VolumeConditions = map[string]metav1.Condition{}
	for _, w := range d.Replications {
		k := w.Key()
		d.Volumes++
		r := replicas[k]
		if r != nil && !o.together(r.Target, w.Destination) {
			// The replica a switch restored the volume from is in the Location it runs in now:
			// it protects nothing until the replication back has synced.
			r = nil
		}
		switch d.replicated(o, k, w, r) {
		case schedulingv1alpha1.ReasonNoReplica:
			missing = append(missing, k)
		case schedulingv1alpha1.ReasonReplicationLagging:
			lagging = append(lagging, k)
		}
		if r != nil && (d.OldestLastSync.IsZero() || r.Time.Time.Before(d.OldestLastSync)) {
			d.OldestLastSync = r.Time.Time
		}
		if m, ok := failed[k]; ok {
			failing = append(failing, k+": "+m)
			d.volumeCondition(k, false, schedulingv1alpha1.ReasonSyncFailed, fmt.Sprintf("the last sync from %s to %s failed, and is retried: %s", w.Source, w.Destination, m))
		}
	}
	for k, why := range d.Unmapped {
		d.volumeCondition(k, false, schedulingv1alpha1.ReasonStorageClassUnmapped, "the volume cannot replicate: "+why)
	}
	for _, v := range o.Unprotected {
		d.volumeCondition(v.Key(), false, schedulingv1alpha1.ReasonNotProtected,
			"the claim is labelled "+storagev1alpha1.ProtectLabel+"=false: the pair does not replicate it, and a switch of Locations leaves it Pending where it is")
	}
	return d.protected(missing, lagging, failing)
}

// latest are the volumes' latest replicas, the ones this decision records taking the place
// of the recorded ones, and the messages of the volumes whose last sync failed.
func (d *Decision) latest(o Observation) (map[string]*storagev1alpha1.Replica, map[string]string) {
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
	return replicas, failed
}

// replicated gives the volume k, replicated as w, its Replicated condition from its latest
// replica r, and returns the condition's reason. A recent replica asks for a look again when
// it turns two intervals old.
func (d *Decision) replicated(o Observation, k string, w Want, r *storagev1alpha1.Replica) string {
	switch {
	case r == nil:
		d.volumeCondition(k, false, schedulingv1alpha1.ReasonNoReplica, fmt.Sprintf("no replica on %s yet", w.Destination))
		return schedulingv1alpha1.ReasonNoReplica
	case o.Now.Sub(r.Time.Time) > 2*o.Pair.Interval:
		d.volumeCondition(k, false, schedulingv1alpha1.ReasonReplicationLagging, fmt.Sprintf("the latest replica, %s on %s, is from %s: older than two intervals (%s)",
			r.Snapshot, r.Target, r.Time.UTC().Format(time.RFC3339), 2*o.Pair.Interval))
		return schedulingv1alpha1.ReasonReplicationLagging
	default:
		d.Protected++
		d.recheckIn(r.Time.Add(2 * o.Pair.Interval).Sub(o.Now))
		d.volumeCondition(k, true, schedulingv1alpha1.ReasonReplicated, fmt.Sprintf("latest replica %s on %s, from %s", r.Snapshot, r.Target, r.Time.UTC().Format(time.RFC3339)))
		return schedulingv1alpha1.ReasonReplicated
	}
}

// protected is the DataProtected condition, from the volumes that are missing a replica,
// lag or failed their last sync, and those that cannot replicate (Unmapped); the first of
// these that any volume is in says why.
func (d *Decision) protected(missing, lagging, failing []string) (bool, string, string) {
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

// volumeCondition sets the Replicated condition of the volume k, True when ok.
func (d *Decision) volumeCondition(k string, ok bool, reason, msg string) {
	d.VolumeConditions[k] = metav1.Condition{Type: storagev1alpha1.ConditionReplicated, Status: status(ok), Reason: reason, Message: msg}
}

// current are the replications as they are: an action keeps them until it completed, so
// that no replica it may restore from goes with its ReplicationDestination, and a failover's
// destinations keep their images until then, once its Fencing step asked them to.
func (o Observation) current() []Want {
	var out []Want
	for _, v := range o.Volumes {
		if v.Replication != nil {
			out = append(out, keep(v))
		}
	}
	return out
}

// keep is the Want that keeps the volume's replication as it is, in the class it keeps the
// replicas in (a destination made while it is kept makes its volume in that class), keeping
// its images if it does.
func keep(v Volume) Want {
	r := v.Replication
	return Want{Namespace: v.Namespace, Claim: v.Claim, Source: r.Source, Destination: r.Destination, Class: r.Class, KeepImages: r.KeepImages}
}

// newReplicas are the ready images of the volumes that differ from what their records say.
// With newerOnly, an image of another target older than the recorded replica is not taken.
// A destination's latest image is the newest it holds, so one of the recorded replica's own
// target replaces the record whatever its time says: VolSync times an image from when the
// destination began to listen, to the second, and an image can seem to begin a second
// before the one it follows, which its rotation has deleted by then.
func (o Observation) newReplicas(vs []Volume, newerOnly bool) map[string]storagev1alpha1.Replica {
	out := map[string]storagev1alpha1.Replica{}
	for _, v := range vs {
		r := v.Replication
		if r == nil || !r.ImageReady || r.Image == nil {
			continue
		}
		if v.Replica != nil && (same(*v.Replica, *r.Image) || newerOnly && older(*r.Image, *v.Replica)) {
			continue
		}
		out[v.Key()] = *r.Image
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// older tells whether the image, of another target than the replica, was taken before it.
func older(image, replica storagev1alpha1.Replica) bool {
	return image.Target != replica.Target && image.Time.Before(&replica.Time)
}

// same tells whether two replicas are one: the same snapshot of the same target, taken at
// the same instant, however its time was decoded.
func same(a, b storagev1alpha1.Replica) bool {
	return a.Target == b.Target && a.Snapshot == b.Snapshot && a.Time.Equal(&b.Time)
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

// holds tells whether the target has the storage class a claim names (nil: the default
// class), and says which class it looked for.
func (t Target) holds(class *string) (string, bool) {
	if class == nil {
		return "marked default", t.DefaultClass != ""
	}
	return *class, slices.Contains(t.Classes, *class)
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
