package access

import (
	"maps"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// labelled is an object labelled with the given state for each target key.
func labelled(states map[string]workloadv1alpha1.ResourceState) *storagev1alpha1.VolumeReplication {
	vr := &storagev1alpha1.VolumeReplication{}
	for key, s := range states {
		metav1.SetMetaDataLabel(&vr.ObjectMeta, workloadv1alpha1.StateLabel(key), string(s))
	}
	return vr
}

func TestNamespaceGrants(t *testing.T) {
	sync, upsync, pending := workloadv1alpha1.ResourceStateSync, workloadv1alpha1.ResourceStateUpsync, workloadv1alpha1.ResourceStatePending
	for _, tc := range []struct {
		name         string
		namespace    map[string]workloadv1alpha1.ResourceState
		replications []map[string]workloadv1alpha1.ResourceState
		want         Grants
	}{
		{name: "placed nowhere", want: Grants{}},
		{name: "placed on one target", namespace: map[string]workloadv1alpha1.ResourceState{"m1": sync},
			want: Grants{"m1": NamespaceRole}},
		{name: "upsync counts as placed", namespace: map[string]workloadv1alpha1.ResourceState{"m1": upsync},
			want: Grants{"m1": NamespaceRole}},
		{name: "a pending label grants nothing", namespace: map[string]workloadv1alpha1.ResourceState{"m1": pending},
			want: Grants{}},
		{name: "the destination of a replication reads the claim only",
			namespace:    map[string]workloadv1alpha1.ResourceState{"m1": sync},
			replications: []map[string]workloadv1alpha1.ResourceState{{"m1": sync, "m3": sync}},
			want:         Grants{"m1": NamespaceRole, "m3": ReplicaRole}},
		{name: "a target placed there and holding replicas gets the namespace role",
			namespace:    map[string]workloadv1alpha1.ResourceState{"m1": sync, "m3": sync},
			replications: []map[string]workloadv1alpha1.ResourceState{{"m1": sync, "m3": sync}},
			want:         Grants{"m1": NamespaceRole, "m3": NamespaceRole}},
		{name: "a replication no longer labelled grants nothing",
			replications: []map[string]workloadv1alpha1.ResourceState{{"m3": pending}},
			want:         Grants{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := labelled(tc.namespace)
			var vrs []metav1.Object
			for _, r := range tc.replications {
				vrs = append(vrs, labelled(r))
			}
			if got := NamespaceGrants(ns, vrs); !maps.Equal(got, tc.want) {
				t.Errorf("NamespaceGrants = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestKeySecrets(t *testing.T) {
	sync := workloadv1alpha1.ResourceStateSync
	vrs := []metav1.Object{}
	for _, r := range []struct {
		states map[string]workloadv1alpha1.ResourceState
		key    string
	}{
		{map[string]workloadv1alpha1.ResourceState{"m1": sync, "m3": sync}, "pair-b"},
		{map[string]workloadv1alpha1.ResourceState{"m1": sync, "m4": sync}, "pair-a"},
		{map[string]workloadv1alpha1.ResourceState{"m1": sync, "m3": sync}, "pair-b"},
		{map[string]workloadv1alpha1.ResourceState{"m2": workloadv1alpha1.ResourceStatePending}, "pair-c"},
	} {
		vr := labelled(r.states)
		vr.Spec.KeySecret = r.key
		vrs = append(vrs, vr)
	}
	secretOf := func(o metav1.Object) string { return o.(*storagev1alpha1.VolumeReplication).Spec.KeySecret }
	for key, want := range map[string][]string{"m1": {"pair-a", "pair-b"}, "m3": {"pair-b"}, "m2": nil, "m9": nil} {
		if got := KeySecrets(key, vrs, secretOf); !slices.Equal(got, want) {
			t.Errorf("KeySecrets(%s) = %v, want %v", key, got, want)
		}
	}
}
