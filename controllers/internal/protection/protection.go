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
// resourceVersion), so that a decision taken on a stale copy is refused with a conflict;
// once it is being deleted, it lets go of its protection finalizer. The deletion's own event
// brings the caller back to the object, so each call does one of the two writes.
func Delete(ctx context.Context, c client.Client, obj client.Object) error {
	if obj.GetDeletionTimestamp().IsZero() {
		uid, rv := obj.GetUID(), obj.GetResourceVersion()
		return client.IgnoreNotFound(c.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv}))
	}
	return Release(ctx, c, obj)
}

// Release drops the protection finalizer of an object being deleted, if it has it.
func Release(ctx context.Context, c client.Client, obj client.Object) error {
	f := finalizerOf(obj)
	if obj.GetDeletionTimestamp().IsZero() || !controllerutil.ContainsFinalizer(obj, f) {
		return nil
	}
	orig := obj.DeepCopyObject().(client.Object)
	controllerutil.RemoveFinalizer(obj, f)
	return client.IgnoreNotFound(c.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}
