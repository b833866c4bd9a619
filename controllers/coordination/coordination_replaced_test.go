package coordination

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/coordination"
)

// laggingClient is a cache that still holds the claim as it was, and an API server that takes
// patches, each to the next version. It refuses to read anything else, and any other call
// panics: neither is expected.
type laggingClient struct {
	client.Client
	claim   *corev1.PersistentVolumeClaim
	patches int
}

func (c *laggingClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	claim, ok := obj.(*corev1.PersistentVolumeClaim)
	if !ok {
		return fmt.Errorf("unexpected read of %T %s", obj, key)
	}
	c.claim.DeepCopyInto(claim)
	return nil
}

func (c *laggingClient) Patch(_ context.Context, obj client.Object, _ client.Patch, _ ...client.PatchOption) error {
	c.patches++
	obj.SetResourceVersion(obj.GetResourceVersion() + "+")
	return nil
}

// TestAStepWaitsForItsWritesInTheCache: a step that patched the claim and the PV remembers the
// versions it replaced, and the next reconcile, whose cache still holds the claim it replaced,
// takes no step: it neither reads nor writes anything else.
func TestAStepWaitsForItsWritesInTheCache(t *testing.T) {
	// A claim on m1, which the coordinator took up: a reconcile would go on to read its record.
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data", ResourceVersion: "7",
		Finalizers: []string{storagev1alpha1.VolumeFinalizer}}}
	workloadv1alpha1.SetState(claim, "m1", workloadv1alpha1.ResourceStateSync)
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", ResourceVersion: "3"}}
	c := &laggingClient{claim: claim}
	r := &Reconciler{Client: c, replaced: versions.NewReplaced()}
	d := coordination.Decision{Actions: []coordination.Action{
		{Kind: coordination.SyncClaim, Target: "m2"}, {Kind: coordination.SyncVolume, Target: "m2"},
	}}
	w := plan(&scope{claim: claim, volume: pv}, d)
	if err := r.carryOut(context.Background(), w, d); err != nil {
		t.Fatal(err)
	}
	w.remember(r.replaced)
	if c.patches != 2 {
		t.Fatalf("%d patches, want the claim's and the PV's", c.patches)
	}
	key := client.ObjectKeyFromObject(claim)
	if !r.replaced.Behind(key, client.ObjectKeyFromObject(pv), "3") {
		t.Error("a cache that holds the PV as it was before the step is not behind")
	}
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	if err != nil || res != (ctrl.Result{}) {
		t.Fatalf("Reconcile of a claim the cache holds as it was: %v, %v; want nothing done", res, err)
	}
	if c.patches != 2 {
		t.Errorf("%d patches after the reconcile, want none more", c.patches)
	}
	if r.replaced.Behind(key, key, "7+") {
		t.Error("a cache that holds the claim written is behind")
	}
}
