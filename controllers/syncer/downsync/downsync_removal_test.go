package downsync

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

var target = transform.Target{Key: "m1", Hub: "8f14e45f-ceea-467f-a0e6-1b9a2d5c7e10"}

// hubCache is a reader of the hub that holds the objects named "Kind namespace/name", each
// in the state given for the target, with the UID "hub" (the one that names the hub PV
// "pvc-hub").
type hubCache map[string]workloadv1alpha1.ResourceState

func (c hubCache) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	state, ok := c[kind+" "+key.String()]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: kind}, key.Name)
	}
	obj.SetUID("hub")
	if state != "" {
		workloadv1alpha1.SetState(obj, target.Key, state)
	}
	return nil
}

// madeAgain reads the hub as its hubCache does, with every object made again since: another
// UID under the same name.
type madeAgain struct{ hubCache }

func (c madeAgain) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.hubCache.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	obj.SetUID("again")
	return nil
}

func (c hubCache) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("not listed")
}

func TestOriginReleased(t *testing.T) {
	hubClaim := types.NamespacedName{Namespace: "team-a", Name: "data"}
	marked := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-member"}}
	target.MarkOrigin(marked, "pvc-hub", hubClaim)
	copied := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "custody-x", Labels: target.Markers(),
		Annotations: map[string]string{transform.HubNameAnnotation: "pvc-hub"}}}
	own := transform.Empty(transform.PVCGVK)
	own.SetName("data")
	sync, upsync := workloadv1alpha1.ResourceStateSync, workloadv1alpha1.ResourceStateUpsync
	for _, tc := range []struct {
		name        string
		obj         metav1.Object
		cache, live client.Reader
		want        bool
	}{
		{"hub PV and claim given", marked, hubCache{"PersistentVolume /pvc-hub": sync, "PersistentVolumeClaim team-a/data": sync}, nil, false},
		{"claim given before its hub PV is made", marked, hubCache{"PersistentVolumeClaim team-a/data": sync}, nil, false},
		{"hub PV given, claim gone", marked, hubCache{"PersistentVolume /pvc-hub": upsync}, nil, false},
		{"neither given", marked, hubCache{}, hubCache{}, true},
		{"the hub PV just upsynced, which the cache does not hold yet", marked, hubCache{}, hubCache{"PersistentVolume /pvc-hub": upsync}, false},
		{"the hub PV given to another target only", marked, hubCache{}, hubCache{"PersistentVolume /pvc-hub": "", "PersistentVolumeClaim team-a/data": ""}, true},
		{"the claim made again under its name, given", marked, madeAgain{hubCache{"PersistentVolumeClaim team-a/data": sync}}, madeAgain{hubCache{"PersistentVolumeClaim team-a/data": sync}}, true},
		{"a copy the syncer made", copied, hubCache{}, hubCache{}, false},
		{"a claim the member made itself", own, hubCache{}, hubCache{}, false},
	} {
		got, err := originReleased(context.Background(), target, tc.cache, tc.live, tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("%s: released %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}
