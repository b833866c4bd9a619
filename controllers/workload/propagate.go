package workload

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Change is what an object's metadata needs to follow its namespace.
type Change struct {
	// Place are the targets the object goes to, with its first state there.
	Place map[string]workloadv1alpha1.ResourceState
	// Leave are the targets the object leaves, with the time their removal was requested.
	Leave map[string]time.Time
	// Return are the targets whose removal request, left from an earlier removal, goes
	// because the object returns there.
	Return []string
}

// Empty tells whether the object already follows its namespace.
func (c Change) Empty() bool {
	return len(c.Place)+len(c.Leave)+len(c.Return) == 0
}

// Propagate computes the change that makes an object follow its namespace: a state for
// every target the namespace is on (Sync, or Pending when coordination decides), the
// namespace's removal request for every target the namespace leaves, and a removal request
// from now for every target the namespace already left (its removal finished before the
// object was marked, as when the namespace moved on twice while the object's updates
// conflicted): the object would stay there for ever.
func Propagate(ns, obj metav1.Object, coordinated bool, now time.Time) Change {
	c := Change{Place: map[string]workloadv1alpha1.ResourceState{}, Leave: map[string]time.Time{}}
	initial := workloadv1alpha1.ResourceStateSync
	if coordinated {
		initial = workloadv1alpha1.ResourceStatePending
	}
	nsPresences, objPresences := workloadv1alpha1.Presences(ns), workloadv1alpha1.Presences(obj)
	for key, objOn := range objPresences {
		if _, nsOn := nsPresences[key]; !nsOn && !objOn.Leaving {
			c.Leave[key] = now
		}
	}
	for key, nsOn := range nsPresences {
		_, placed := objPresences[key]
		// A removal request outlives the state label: a returning object loses it.
		objLeaving, _ := workloadv1alpha1.RemovalRequested(obj, key)
		switch {
		case nsOn.Leaving && placed && !objLeaving:
			c.Leave[key] = nsOn.LeavingSince
		case !nsOn.Leaving && !placed:
			c.Place[key] = initial
			if objLeaving {
				c.Return = append(c.Return, key)
			}
		}
	}
	return c
}

// Apply writes the change into the object's metadata.
func (c Change) Apply(obj metav1.Object) {
	for key, s := range c.Place {
		workloadv1alpha1.SetState(obj, key, s)
	}
	for key, t := range c.Leave {
		workloadv1alpha1.RequestRemoval(obj, key, t)
	}
	for _, key := range c.Return {
		workloadv1alpha1.CancelRemoval(obj, key)
	}
}
