package syncio

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/custody-dev/custody/controllers/syncer/transform"
)

func TestRequests(t *testing.T) {
	target := transform.Target{Key: "m1", Hub: "8f14e45f-ceea-467f-a0e6-1b9a2d5c7e10"}
	made := func(tg transform.Target, annotations map[string]string) client.Object {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: tg.Markers(), Annotations: annotations}}
	}
	back := map[string]string{transform.HubNamespaceAnnotation: "team-a", transform.HubNameAnnotation: "cfg"}
	provisioned := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-member"}}
	target.MarkOrigin(provisioned, "pvc-hub", types.NamespacedName{Namespace: "team-a", Name: "data"})
	for _, tc := range []struct {
		name        string
		obj         client.Object
		isNamespace bool
		want        []reconcile.Request
	}{
		{"a copy the syncer made", made(target, back), false, []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "cfg"}}}},
		{"a downstream namespace", made(target, back), true, []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "team-a"}}}},
		{"a copy naming no hub object", made(target, nil), false, nil},
		{"another target's copy", made(transform.Target{Key: "m2", Hub: target.Hub}, back), false, nil},
		{"a PV the member provisioned, not made by the syncer", provisioned, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Requests(target, tc.isNamespace)(context.Background(), tc.obj); !slices.Equal(got, tc.want) {
				t.Fatalf("Requests = %v, want %v", got, tc.want)
			}
		})
	}
}
