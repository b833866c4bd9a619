package syncio

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
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Hold puts the target's syncer finalizer on a hub object, before the syncer makes anything
// for it in the member, so that the object goes only after that is gone.
func Hold(ctx context.Context, hub client.Client, t transform.Target, obj client.Object) error {
	if controllerutil.ContainsFinalizer(obj, t.Finalizer()) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(obj, t.Finalizer())
	return hub.Patch(ctx, obj, patch)
}

// LetGo takes the target's syncer finalizer off a hub object, once what the syncer made for
// it in the member is gone.
func LetGo(ctx context.Context, hub client.Client, t transform.Target, obj client.Object) error {
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	if !controllerutil.RemoveFinalizer(obj, t.Finalizer()) {
		return nil
	}
	return client.IgnoreNotFound(hub.Patch(ctx, obj, patch))
}

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
// each for every one the target's syncer finalizer holds that is not placed on the target.
func ReconcileHeld(ctx context.Context, hub client.Reader, t transform.Target, list client.ObjectList,
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
