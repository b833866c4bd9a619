package dr

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
)

// madeOrGone passes the events that change which pairs share a Location: a pair made or
// deleted. A pair's Locations never change.
var madeOrGone = predicate.Funcs{
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// sharedLocations are the other pairs, not being deleted, that have a Location of p.
func (r *Reconciler) sharedLocations(ctx context.Context, p *schedulingv1alpha1.LocationPair) ([]dr.Sharing, error) {
	pairs := &schedulingv1alpha1.LocationPairList{}
	if err := r.Client.List(ctx, pairs); err != nil {
		return nil, err
	}
	return dr.SharedLocations(dr.LocationsOf(p), dr.LiveLocations(pairs.Items)), nil
}

// writeYielded records that the pair is not acted on, as a pair made before it shares a
// Location: Pending, with the LocationsExclusive condition naming that pair. The rest of
// its status stays as it was.
func (r *Reconciler) writeYielded(ctx context.Context, p *schedulingv1alpha1.LocationPair, c metav1.Condition) error {
	st := p.Status.DeepCopy()
	st.Phase, st.ObservedGeneration = schedulingv1alpha1.PairPending, p.Generation
	c.ObservedGeneration = p.Generation
	meta.SetStatusCondition(&st.Conditions, c)
	if equality.Semantic.DeepEqual(p.Status, *st) {
		return nil
	}
	return r.applyStatus(ctx, p, *st)
}
