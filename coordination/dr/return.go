package dr

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// restore is the Restoring step of a switch, and the Starting step after it: each claim that
// was in the Location left is asked to restore in the other from its replica, that Location
// is active once every claim is seen asked, and once every claim with a replica is bound
// there the workloads start (serve), and the switch completes once they are ready.
func (d *Decision) restore(o Observation) {
	a := d.Action
	if a.Mode == schedulingv1alpha1.Relocate {
		d.Replications = o.triggered(trigger(a)) // no scheduled sync replaces the image restored from
	}
	if d.Replicas == nil {
		// As when the step began: the record of the replicas taken then may have been
		// lost, and a claim not yet asked to restore takes the newest.
		d.Replicas = o.newReplicas(o.unasked(a), a.Mode == schedulingv1alpha1.Failover)
	}
	asked := o.restores(a, d.Replicas)
	d.Restores, d.Classes = asked.from, asked.classes
	restored := o.restored(a, d.Replicas)
	if len(asked.from) == 0 || o.Active == a.To || restored {
		// The namespaces follow the active Location at once: it switches once every claim
		// is seen asked (or none waits for a restore), so that none starts a move to the
		// Location switched to, from a volume the restore then sets aside anyway. A claim
		// back where its volume is binds there once its restore is over, with them.
		d.Active, d.Unrestores = a.To, asked.over
	}
	if !restored {
		return
	}
	if a.Progression == schedulingv1alpha1.ProgressionRestoring {
		d.moveTo(o, schedulingv1alpha1.ProgressionStarting)
	}
	d.serve(o)
}

// awaitedRestores says what the Restoring step waits for: the volumes with a replica to be
// restored from, not yet bound in the Location switched to.
func (o Observation) awaitedRestores(a *schedulingv1alpha1.PairAction) string {
	var waiting []string
	for _, v := range o.Volumes {
		if o.usable(v, a, nil) != nil && (!v.Bound || !o.Locations[a.To].has(v.Owner)) {
			waiting = append(waiting, v.Key())
		}
	}
	return fmt.Sprintf("%d volumes to be restored and bound in %s, the first %s", len(waiting), a.To, first(waiting))
}

// asks are the annotations a switch writes on the claims, by namespace/claim: restore-from
// (from), and storage-class where a restore maps the volume's class (classes); over are the
// claims whose restore-from goes.
type asks struct {
	from, classes map[string]string
	over          []string
}

// restores are the restore-from annotations a switch needs where the claims do not carry
// them yet: a volume with a replica (the one just taken, for a relocate) is restored from it,
// in the class the pair maps its own to; one that was in the Location the switch leaves and
// has none, or is not protected, is told so, and waits rather than start empty. A claim made
// since in the new Location needs none. They follow from what is observed alone, so that a
// switch completed goes on asking for them (completed).
func (o Observation) restores(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) asks {
	out := asks{from: map[string]string{}, classes: map[string]string{}}
	ask := func(v Volume, r *storagev1alpha1.Replica) {
		if o.asked(v, a) {
			return // a restore asked of the Location switched to is not changed midway
		}
		var want string
		switch {
		case r != nil:
			want = r.Target + "/" + r.Snapshot
			if c := o.classAnnotation(v, a.To); c != v.mapped() {
				out.classes[v.Key()] = c
			}
		case !o.Locations[a.From].has(v.Owner):
			// Already where the switch goes (a claim that waited with no replica, back with
			// its data: see usable), or nowhere yet: any restore asked before is over.
			if v.Restore != nil {
				out.over = append(out.over, v.Key())
			}
			return
		}
		if v.Restore == nil || *v.Restore != want {
			out.from[v.Key()] = want
		}
	}
	for _, v := range o.Volumes {
		ask(v, o.usable(v, a, taken))
	}
	for _, v := range o.Unprotected {
		ask(v, nil)
	}
	if len(out.from) == 0 {
		out.from = nil
	}
	if len(out.classes) == 0 {
		out.classes = nil
	}
	return out
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
// recorded, when it is in the Location switched to; nil when there is none, or when the
// volume needs none.
func (o Observation) usable(v Volume, a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) *storagev1alpha1.Replica {
	r := v.Replica
	if n, ok := taken[v.Key()]; ok {
		r = &n
	}
	if r == nil || !o.Locations[a.To].has(r.Target) {
		return nil // none, or one from before an earlier switch, in the Location left
	}
	if o.Locations[a.To].has(v.Owner) && !o.asked(v, a) {
		// The volume is in the Location switched to already (it waited there with no
		// replica as a switch went away, and was written to before): a replica there is
		// from before, and a restore from it would lose what was written since. It keeps
		// its volume. A claim asked to restore has its replica's target for owner as the
		// restore goes on: that one is restored.
		return nil
	}
	return r
}

// completed keeps on the claims what the switch completed wrote there, as they are observed
// now: the decision that completed it writes the pair's status before the claims, and a
// restart in between must not leave a claim with no replica untold, nor one back where it
// went with its data waiting for a restore.
func (d *Decision) completed(o Observation) {
	a := d.Action
	if a == nil || a.Progression != schedulingv1alpha1.ProgressionCompleted {
		return
	}
	asked := o.restores(a, nil)
	d.Restores, d.Classes = asked.from, asked.classes
	for _, k := range asked.over {
		if !slices.Contains(d.Unrestores, k) {
			d.Unrestores = append(d.Unrestores, k)
		}
	}
}

// restored tells whether every volume with a replica is bound on a target of the Location
// switched to.
func (o Observation) restored(a *schedulingv1alpha1.PairAction, taken map[string]storagev1alpha1.Replica) bool {
	return !slices.ContainsFunc(o.Volumes, func(v Volume) bool {
		return o.usable(v, a, taken) != nil && (!v.Bound || !o.Locations[a.To].has(v.Owner))
	})
}

// oldestRestored is the time of the oldest replica a volume of the Location switched to came
// back from.
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
