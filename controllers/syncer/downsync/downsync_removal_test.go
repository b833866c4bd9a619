package downsync

import (
	"context"
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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

func TestUnrecorded(t *testing.T) {
	up := transform.Empty(transform.PVCGVK)
	up.SetNamespace("team-a")
	up.SetName("data")
	up.SetUID("hub")
	down := transform.Empty(transform.PVCGVK)
	down.SetNamespace("custody-x")
	down.SetName("data")
	down.SetUID("copy")
	if err := unstructured.SetNestedField(down.Object, "pvc-member", "spec", "volumeName"); err != nil {
		t.Fatal(err)
	}
	provisioned := func(claimUID types.UID, labels map[string]string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-member", Labels: labels},
			Spec:       corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "custody-x", Name: "data", UID: claimUID}},
		}
	}
	record := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: workloadv1alpha1.UpsyncedPVName("hub")}}
	// A claim restored from a hub export has another UID than the one its record is named
	// after; the member's PV names that record as its origin.
	restored := provisioned("copy", nil)
	target.MarkOrigin(restored, workloadv1alpha1.UpsyncedPVName("exported"), types.NamespacedName{Namespace: "team-a", Name: "data"})
	exported := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: workloadv1alpha1.UpsyncedPVName("exported")}}
	retain, del := corev1.PersistentVolumeReclaimRetain, corev1.PersistentVolumeReclaimDelete
	for _, tc := range []struct {
		name    string
		member  []client.Object
		hub     []client.Object
		release corev1.PersistentVolumeReclaimPolicy
		want    bool
	}{
		{"the member provisioned the volume, not recorded yet", []client.Object{provisioned("copy", nil)}, nil, retain, true},
		{"recorded", []client.Object{provisioned("copy", nil)}, []client.Object{record}, retain, false},
		{"released with the claim", []client.Object{provisioned("copy", nil)}, nil, del, false},
		{"a PV the syncer made", []client.Object{provisioned("copy", target.Markers())}, nil, retain, false},
		{"a PV bound to another claim", []client.Object{provisioned("other", nil)}, nil, retain, false},
		{"no PV", nil, nil, retain, false},
		{"recorded under the name of its origin, the claim restored since", []client.Object{restored}, []client.Object{exported}, retain, false},
		{"the record of its origin not made yet", []client.Object{restored}, []client.Object{record}, retain, true},
	} {
		r := &Reconciler{GVK: transform.PVCGVK, Target: target}
		hub := fake.NewClientBuilder().WithObjects(tc.hub...).Build()
		member := fake.NewClientBuilder().WithObjects(tc.member...).Build()
		r.Hub, r.HubReader, r.Member, r.MemberReader = hub, hub, member, member
		got, err := r.unrecorded(context.Background(), up, down, tc.release)
		if err != nil || got != tc.want {
			t.Errorf("%s: waiting %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}

func TestUpstreamFromTheAPIServer(t *testing.T) {
	claim := types.NamespacedName{Namespace: "team-a", Name: "data"}
	sync, upsync := workloadv1alpha1.ResourceStateSync, workloadv1alpha1.ResourceStateUpsync
	for _, tc := range []struct {
		name string
		gvk  schema.GroupVersionKind
		key  types.NamespacedName
		hub  hubCache
		want bool
	}{
		{"a claim Sync in a placed namespace", transform.PVCGVK, claim, hubCache{"PersistentVolumeClaim team-a/data": sync, "Namespace /team-a": sync}, true},
		{"a claim not on the hub (yet)", transform.PVCGVK, claim, hubCache{"Namespace /team-a": sync}, false},
		{"a claim Sync in a namespace placed elsewhere", transform.PVCGVK, claim, hubCache{"PersistentVolumeClaim team-a/data": sync, "Namespace /team-a": ""}, false},
		{"a claim given to another target only", transform.PVCGVK, claim, hubCache{"PersistentVolumeClaim team-a/data": "", "Namespace /team-a": sync}, false},
		{"a PV Sync", transform.PVGVK, types.NamespacedName{Name: "pvc-hub"}, hubCache{"PersistentVolume /pvc-hub": sync}, true},
		{"a PV the target upsynced", transform.PVGVK, types.NamespacedName{Name: "pvc-hub"}, hubCache{"PersistentVolume /pvc-hub": upsync}, false},
		{"a placed namespace", transform.NamespaceGVK, types.NamespacedName{Name: "team-a"}, hubCache{"Namespace /team-a": sync}, true},
	} {
		r := &Reconciler{GVK: tc.gvk, Target: target}
		up, err := r.upstreamFrom(context.Background(), tc.hub, nil, tc.key)
		if got := up != nil; err != nil || got != tc.want {
			t.Errorf("%s: %v (%v), want %v", tc.name, got, err, tc.want)
		}
	}
}
