package transform

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// HeldRequest is the request, which names no object, to look at every hub object the
// syncer's finalizer holds. A syncer stopped after it put its finalizer on an object and
// before it let go, whose object is no longer labelled for its target when it starts again,
// has the object in none of its caches: no event would bring it back, and the finalizer would
// hold it for ever.
var HeldRequest = reconcile.Request{}

// AtStart is a source that asks once, as its controller starts, for HeldRequest.
func AtStart() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(HeldRequest)
		return nil
	})
}

// ReconcileHeld lists, from the hub's API server, the objects of list's kind, and runs
// each for every one the syncer's finalizer holds that is not placed on its target.
func (t Target) ReconcileHeld(ctx context.Context, hub client.Reader, list client.ObjectList,
	each func(context.Context, reconcile.Request) (reconcile.Result, error)) error {
	if err := hub.List(ctx, list); err != nil {
		return fmt.Errorf("listing what the syncer holds: %w", err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	var errs []error
	for _, item := range items {
		obj, ok := item.(client.Object)
		if !ok || !controllerutil.ContainsFinalizer(obj, t.Finalizer()) {
			continue
		}
		if state, _ := t.State(obj); state == workloadv1alpha1.ResourceStateSync || state == workloadv1alpha1.ResourceStateUpsync {
			continue // in the syncer's hub cache, whose start brings it
		}
		if _, err := each(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
