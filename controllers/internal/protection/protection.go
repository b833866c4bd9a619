package protection

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// The finalizers a hub API server's admission adds.
const (
	PVCFinalizer = "kubernetes.io/pvc-protection"
	PVFinalizer  = "kubernetes.io/pv-protection"
)

// finalizerOf is the protection finalizer of a claim or a PV.
func finalizerOf(obj client.Object) string {
	if _, ok := obj.(*corev1.PersistentVolumeClaim); ok {
		return PVCFinalizer
	}
	if obj.GetObjectKind().GroupVersionKind().Kind == "PersistentVolumeClaim" {
		return PVCFinalizer
	}
	return PVFinalizer
}

// Delete deletes the object, exactly the version the caller decided on (its UID and
// resourceVersion), so that a decision taken on a stale copy is refused with a conflict. Its
// protection finalizer goes first, in a patch under the same optimistic lock, so that the
// deletion takes effect at once rather than on the caller's next pass; an object already
// being deleted only lets go of its finalizer.
func Delete(ctx context.Context, c client.Client, obj client.Object) error {
	if !obj.GetDeletionTimestamp().IsZero() {
		return Release(ctx, c, obj)
	}
	if err := dropFinalizer(ctx, c, obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	return client.IgnoreNotFound(c.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}))
}

// Release drops the protection finalizer of an object being deleted, if it has it.
func Release(ctx context.Context, c client.Client, obj client.Object) error {
	if obj.GetDeletionTimestamp().IsZero() {
		return nil
	}
	return client.IgnoreNotFound(dropFinalizer(ctx, c, obj))
}

// dropFinalizer patches the object's protection finalizer off, if it has it, under an
// optimistic lock on the version read; obj becomes the version written.
func dropFinalizer(ctx context.Context, c client.Client, obj client.Object) error {
	f := finalizerOf(obj)
	if !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, f)
	return c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}
