package leases

import (
	"context"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Of reads the target's heartbeat Lease; nil when there is none.
func Of(ctx context.Context, r client.Reader, target string) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := r.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: target}, lease)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return lease, err
}

// Heartbeats lets through the events of heartbeat Leases.
var Heartbeats = predicate.NewPredicateFuncs(func(o client.Object) bool {
	return o.GetNamespace() == workloadv1alpha1.HeartbeatNamespace
})

// CleanReports lets through the events of heartbeat Leases that bring a new clean report
// (workloadv1alpha1.CleanReportAnnotation), or none: what a decision on a target's clean
// report needs to see, and no mere renewal.
func CleanReports() predicate.Predicate {
	return predicate.And(Heartbeats, predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		a := workloadv1alpha1.CleanReportAnnotation
		return e.ObjectOld.GetAnnotations()[a] != e.ObjectNew.GetAnnotations()[a]
	}})
}
