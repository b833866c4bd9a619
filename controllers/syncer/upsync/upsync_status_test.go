package upsync

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
)

// TestTheHubStatusIsAppliedOnce: the status of a hub PV the syncer just made is applied
// once; a sync from the cache that still holds the PV as it was made, before the apply,
// leaves it as it is, and one from a later version applies a status that differs again.
func TestTheHubStatusIsAppliedOnce(t *testing.T) {
	ctx := context.Background()
	applies := 0
	hub := fake.NewClientBuilder().WithStatusSubresource(&corev1.PersistentVolume{}).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceApply: func(ctx context.Context, c client.Client, sub string, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
			applies++
			return c.SubResource(sub).Apply(ctx, obj, opts...)
		},
	}).Build()
	r := &Reconciler{Clients: syncio.Clients{Hub: hub}, reported: versions.NewReplaced()}
	req := types.NamespacedName{Namespace: "team-a", Name: "data"}
	made := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-1"}}
	if err := hub.Create(ctx, made); err != nil {
		t.Fatal(err)
	}
	cached := made.DeepCopy() // the cache, which has not seen the apply yet
	bound := corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}
	if err := r.ensureHubStatus(ctx, req, made, bound); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureHubStatus(ctx, req, cached, bound); err != nil {
		t.Fatal(err)
	}
	if applies != 1 {
		t.Fatalf("%d status applies from the PV made and the cache behind the apply, want 1", applies)
	}

	// Another version, whose status someone changed since, gets the member's status again.
	now := &corev1.PersistentVolume{}
	if err := hub.Get(ctx, client.ObjectKey{Name: "pvc-1"}, now); err != nil {
		t.Fatal(err)
	}
	if now.Status.Phase != corev1.VolumeBound {
		t.Fatalf("hub PV %s, want Bound", now.Status.Phase)
	}
	now.Status.Phase = corev1.VolumeReleased
	if err := hub.Status().Update(ctx, now); err != nil {
		t.Fatal(err)
	}
	if err := r.ensureHubStatus(ctx, req, now, bound); err != nil {
		t.Fatal(err)
	}
	if applies != 2 {
		t.Fatalf("%d status applies, want 2: a status changed since is set again", applies)
	}
}
