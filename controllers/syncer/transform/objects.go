package transform

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The kinds the syncer reads by name.
var (
	NamespaceGVK = corev1.SchemeGroupVersion.WithKind("Namespace")
	PVGVK        = corev1.SchemeGroupVersion.WithKind("PersistentVolume")
	PVCGVK       = corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
)

// Empty returns an empty object of the kind, to read into.
func Empty(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	return obj
}

// EmptyList returns an empty list of the kind, to list into.
func EmptyList(gvk schema.GroupVersionKind) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return list
}

// ClaimOf names the claim a PV's claimRef points at; ok is false when it points at none.
func ClaimOf(pv *unstructured.Unstructured) (key types.NamespacedName, ok bool) {
	ref, _, _ := unstructured.NestedStringMap(pv.Object, "spec", "claimRef")
	return types.NamespacedName{Namespace: ref["namespace"], Name: ref["name"]}, ref["name"] != ""
}
