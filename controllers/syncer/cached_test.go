package syncer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestTrimCached(t *testing.T) {
	decoded := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"PersistentVolumeClaim",
			"metadata":{"name":"data","namespace":"team-a","managedFields":[{"manager":"kubectl"}],
				"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","keep":"me"}},
			"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}},
			"status":{"phase":"Bound"}}`)); err != nil {
			t.Fatal(err)
		}
		return u
	}
	u := decoded()
	want := decoded()
	want.SetManagedFields(nil)
	want.SetAnnotations(map[string]string{"keep": "me"})
	if _, err := trimCached(u); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(u.Object, want.Object) {
		t.Fatalf("trimmed %v, want %v", u.Object, want.Object)
	}

	typed := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		Annotations:   map[string]string{corev1.LastAppliedConfigAnnotation: "{}"},
	}}
	if _, err := trimCached(typed); err != nil {
		t.Fatal(err)
	}
	if typed.ManagedFields != nil || len(typed.Annotations) != 0 {
		t.Errorf("trimmed typed object keeps %v and %v", typed.ManagedFields, typed.Annotations)
	}
}
