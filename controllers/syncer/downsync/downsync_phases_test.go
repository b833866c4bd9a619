package downsync

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
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

// TestBindingCopiesKeepTheHubClaimBound: a claim's copy that is Pending until its member binds
// the volume it was made for, or provisions it from the claim's replica, leaves the hub claim
// Bound; any other Pending copy is reported.
func TestBindingCopiesKeepTheHubClaimBound(t *testing.T) {
	claim := func(phase corev1.PersistentVolumeClaimPhase, volume string, annotations map[string]string) *unstructured.Unstructured {
		o := transform.Empty(transform.PVCGVK)
		o.SetAnnotations(annotations)
		o.Object["spec"] = map[string]any{"volumeName": volume}
		o.Object["status"] = map[string]any{"phase": string(phase)}
		return o
	}
	restoreHere := map[string]string{storagev1alpha1.RestoreAnnotation: target.Key + "/snap-1"}
	restoreElsewhere := map[string]string{storagev1alpha1.RestoreAnnotation: "m9/snap-1"}
	r := &Reconciler{Target: target}
	for _, c := range []struct {
		name     string
		up, down *unstructured.Unstructured
		want     bool
	}{
		{"a moved claim's copy, pre-bound", claim(corev1.ClaimBound, "pvc-1", nil), claim(corev1.ClaimPending, "pvc-1", nil), true},
		{"a claim restored here from its replica", claim(corev1.ClaimBound, "pvc-1", restoreHere), claim(corev1.ClaimPending, "", restoreHere), true},
		{"a claim restored on another target", claim(corev1.ClaimBound, "pvc-1", restoreElsewhere), claim(corev1.ClaimPending, "", restoreElsewhere), false},
		{"a copy with no volume, not restored", claim(corev1.ClaimBound, "pvc-1", nil), claim(corev1.ClaimPending, "", nil), false},
		{"a new claim, Pending on the hub too", claim(corev1.ClaimPending, "", restoreHere), claim(corev1.ClaimPending, "", restoreHere), false},
		{"a copy that lost its volume", claim(corev1.ClaimBound, "pvc-1", nil), claim(corev1.ClaimLost, "pvc-1", nil), false},
	} {
		if got := r.binding(c.up, c.down); got != c.want {
			t.Errorf("%s: binding %t, want %t", c.name, got, c.want)
		}
	}
}

// TestAnUnjudgedCopyLeavesTheHubClaimsUnusedCondition: a claim's copy whose member has not put
// the Unused condition on it yet does not take the hub claim's off; any other difference is
// reported.
func TestAnUnjudgedCopyLeavesTheHubClaimsUnusedCondition(t *testing.T) {
	condition := func(kind, status string) map[string]any {
		return map[string]any{"type": kind, "status": status, "lastTransitionTime": "2026-01-01T00:00:00Z"}
	}
	status := func(capacity string, conditions ...map[string]any) map[string]any {
		s := map[string]any{"phase": "Bound", "capacity": map[string]any{"storage": capacity}}
		if len(conditions) > 0 {
			list := []any{}
			for _, c := range conditions {
				list = append(list, c)
			}
			s["conditions"] = list
		}
		return s
	}
	unused, used := condition("Unused", "True"), condition("Unused", "False")
	resizing := condition("Resizing", "True")
	for _, c := range []struct {
		name        string
		gvk         schema.GroupVersionKind
		hub, member map[string]any
		want        bool
	}{
		{"the copy has no Unused condition yet", transform.PVCGVK, status("1Gi", unused), status("1Gi"), true},
		{"the copy is used", transform.PVCGVK, status("1Gi", unused), status("1Gi", used), false},
		{"the copy's resize ended", transform.PVCGVK, status("1Gi", unused, resizing), status("1Gi"), false},
		{"the copy grew", transform.PVCGVK, status("1Gi", unused), status("2Gi"), false},
		{"the hub claim has no Unused condition either", transform.PVCGVK, status("1Gi"), status("2Gi"), false},
		{"not a claim", schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, status("1Gi", unused), status("1Gi"), false},
	} {
		up := &unstructured.Unstructured{Object: map[string]any{"status": c.hub}}
		up.SetGroupVersionKind(c.gvk)
		if got := unjudged(up, c.member); got != c.want {
			t.Errorf("%s: unjudged %t, want %t", c.name, got, c.want)
		}
	}
}
