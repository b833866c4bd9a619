package downsync

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// TestTheFinalizerIsPutOnOnce: the syncer's finalizer goes on the hub object once, and a
// sync from a cache that still holds the version the patch replaced leaves it as it is,
// instead of patching that version again to a conflict.
func TestTheFinalizerIsPutOnOnce(t *testing.T) {
	ctx := context.Background()
	hub := fake.NewClientBuilder().WithObjects(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-hub"}}).Build()
	r := &Reconciler{GVK: transform.PVGVK, Target: target, finalized: versions.NewReplaced()}
	r.Hub = hub
	read := transform.Empty(transform.PVGVK)
	if err := hub.Get(ctx, client.ObjectKey{Name: "pvc-hub"}, read); err != nil {
		t.Fatal(err)
	}
	cached := read.DeepCopy() // the cache, which has not seen the patch yet
	if err := r.ensureFinalizer(ctx, read); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureFinalizer(ctx, cached.DeepCopy()); err != nil {
		t.Fatalf("a sync from the version the patch replaced: %v", err)
	}
	written := &unstructured.Unstructured{}
	written.SetGroupVersionKind(transform.PVGVK)
	if err := hub.Get(ctx, client.ObjectKey{Name: "pvc-hub"}, written); err != nil {
		t.Fatal(err)
	}
	if !controllerutil.ContainsFinalizer(written, target.Finalizer()) || written.GetResourceVersion() != read.GetResourceVersion() {
		t.Fatalf("hub PV at version %s with finalizers %v; want the one patch's version %s, with %s",
			written.GetResourceVersion(), written.GetFinalizers(), read.GetResourceVersion(), target.Finalizer())
	}
	// Once the cache holds another version, the finalizer is looked for again.
	unstructured.RemoveNestedField(written.Object, "metadata", "finalizers")
	if err := hub.Update(ctx, written); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureFinalizer(ctx, written); err != nil || !controllerutil.ContainsFinalizer(written, target.Finalizer()) {
		t.Fatalf("a finalizer taken off since is not put on again: %v, finalizers %v", err, written.GetFinalizers())
	}
}
