package dr

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
)

// observe reads the drill's pair, the pair's volumes as the pair reads them, the drills of
// the pair made before, and the drill's sandboxes.
func (r *DrillReconciler) observe(ctx context.Context, d *schedulingv1alpha1.Drill, now time.Time) (*scope, dr.DrillObservation, error) {
	o := dr.DrillObservation{Now: now, Status: d.Status, Claims: map[string]dr.SandboxClaim{}}
	p := &schedulingv1alpha1.LocationPair{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: d.Spec.Pair}, p); {
	case apierrors.IsNotFound(err):
		return nil, o, nil
	case err != nil:
		return nil, o, err
	}
	o.PairFound, o.Active = true, p.Status.ActiveLocation
	o.Switching = p.Status.LastAction != nil && !p.Status.LastAction.Over()
	o.Pair = dr.Pair{Primary: p.Spec.Primary, Secondary: p.Spec.Secondary, Classes: p.Spec.StorageClassMap}
	s := &scope{pair: p, replications: map[string]*storagev1alpha1.VolumeReplication{}, ownerships: map[string]*storagev1alpha1.VolumeOwnership{},
		claims: map[string]*corev1.PersistentVolumeClaim{}}
	pairObservation := dr.Observation{}
	if err := volumes(ctx, r.Client, s, &pairObservation); err != nil {
		return nil, o, err
	}
	o.Volumes, o.Unprotected = pairObservation.Volumes, pairObservation.Unprotected
	for _, ns := range s.namespaces {
		o.Namespaces = append(o.Namespaces, ns.Name)
	}
	var err error
	if o.Before, err = r.drilledBefore(ctx, d); err != nil {
		return nil, o, err
	}
	if o.Taken, err = r.taken(ctx, d, o.Namespaces); err != nil {
		return nil, o, err
	}
	return s, o, r.sandboxes(ctx, d, &o)
}

// drilledBefore names a drill of the same pair made before d, if one is left.
func (r *DrillReconciler) drilledBefore(ctx context.Context, d *schedulingv1alpha1.Drill) (string, error) {
	drills := &schedulingv1alpha1.DrillList{}
	if err := r.Client.List(ctx, drills); err != nil {
		return "", err
	}
	for _, other := range drills.Items {
		if other.Spec.Pair != d.Spec.Pair || other.Name == d.Name {
			continue
		}
		if t, mine := other.CreationTimestamp, d.CreationTimestamp; t.Before(&mine) || t.Equal(&mine) && other.Name < d.Name {
			return other.Name, nil
		}
	}
	return "", nil
}

// taken are the sandboxes of the pair's namespaces that exist and are not the drill's.
func (r *DrillReconciler) taken(ctx context.Context, d *schedulingv1alpha1.Drill, namespaces []string) ([]string, error) {
	var out []string
	for _, ns := range namespaces {
		sandbox := &corev1.Namespace{}
		switch err := r.Client.Get(ctx, client.ObjectKey{Name: dr.SandboxOf(ns)}, sandbox); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, err
		case sandbox.Labels[schedulingv1alpha1.DrillLabel] != d.Name:
			out = append(out, sandbox.Name)
		}
	}
	return out, nil
}

// sandboxes reads the claims and workloads the drill made in its sandboxes.
func (r *DrillReconciler) sandboxes(ctx context.Context, d *schedulingv1alpha1.Drill, o *dr.DrillObservation) error {
	claims := &corev1.PersistentVolumeClaimList{}
	if err := r.Client.List(ctx, claims, client.MatchingLabels{schedulingv1alpha1.DrillLabel: d.Name}); err != nil {
		return err
	}
	for _, c := range claims.Items {
		_, snapshot, _ := storagev1alpha1.RestoreFrom(c.Annotations)
		// Bound as coordination records it: the volume is bound on its owner, and the hub
		// knows which it is.
		vo := &storagev1alpha1.VolumeOwnership{}
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(&c), vo); client.IgnoreNotFound(err) != nil {
			return err
		}
		bound := vo.Status.Phase == storagev1alpha1.Bound && vo.Status.VolumeName != ""
		o.Claims[c.Namespace+"/"+c.Name] = dr.SandboxClaim{Restored: snapshot != "", Bound: bound}
	}
	var names []string
	for _, ns := range d.Status.Namespaces {
		names = append(names, ns.Sandbox)
	}
	return workloads(ctx, r.Client, names, func(w dr.Workload, _ client.Object) { o.Workloads = append(o.Workloads, w) })
}

// drillRecords are the history entries of the pair's drills that were ready or ended.
func drillRecords(ctx context.Context, c client.Reader, p *schedulingv1alpha1.LocationPair) ([]schedulingv1alpha1.PairAction, error) {
	drills := &schedulingv1alpha1.DrillList{}
	if err := c.List(ctx, drills); err != nil {
		return nil, err
	}
	var out []schedulingv1alpha1.PairAction
	for _, d := range drills.Items {
		if d.Spec.Pair != p.Name {
			continue
		}
		if a := dr.DrillRecord(d.Status, p.Peer(d.Status.Location), !d.DeletionTimestamp.IsZero()); a != nil {
			out = append(out, *a)
		}
	}
	return out, nil
}
