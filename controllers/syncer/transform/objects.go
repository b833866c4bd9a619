package transform

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
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

// Read reads the object of the kind from the cache, and, when the cache does not hold it and
// direct is not nil, from direct: a cache of the syncer's holds only the objects labelled for
// its target. It returns nil when the object does not exist, or is not the syncer's to read.
func Read(ctx context.Context, cached, direct client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	obj := Empty(gvk)
	err := cached.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && direct != nil {
		err = direct.Get(ctx, key, obj)
	}
	if Absent(err) {
		return nil, nil
	}
	return obj, err
}

// Absent tells whether a read's error says that the object is not there for the syncer: not
// found, or in a hub namespace where its identity may not read, which is then not placed on
// its target (package access grants the reads).
func Absent(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err)
}

// ClaimOf names the claim a PV's claimRef points at; ok is false when it points at none.
func ClaimOf(pv *unstructured.Unstructured) (key types.NamespacedName, ok bool) {
	ref, _, _ := unstructured.NestedStringMap(pv.Object, "spec", "claimRef")
	return types.NamespacedName{Namespace: ref["namespace"], Name: ref["name"]}, ref["name"] != ""
}

// ClaimOfVolume maps a PV to a request for the claim its claimRef points at.
func ClaimOfVolume(_ context.Context, obj client.Object) []reconcile.Request {
	if key, ok := ClaimOf(obj.(*unstructured.Unstructured)); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}

// EnsureNamespace creates the downstream namespace of a hub namespace when it is missing, and
// tells whether it did. When the hub namespace itself is synced, the namespace's downsync
// fills in its labels and annotations.
func EnsureNamespace(ctx context.Context, c Clients, t Target, hubNamespace string) (bool, error) {
	name := t.Namespace(hubNamespace)
	ns, err := Read(ctx, c.Member, c.MemberReader, NamespaceGVK, client.ObjectKey{Name: name})
	switch {
	case err != nil:
		return false, err
	case ns == nil:
		stub := Empty(NamespaceGVK)
		stub.SetName(hubNamespace)
		desired, err := t.Downstream(stub, Inputs{})
		if err != nil {
			return false, err
		}
		if err := c.Member.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return false, err
		}
		ctrl.LoggerFrom(ctx).Info("Created downstream namespace", "downstreamNamespace", name, "hubNamespace", hubNamespace)
		return true, nil
	case !t.Owns(ns):
		return false, fmt.Errorf("downstream namespace %s exists and was not created by the syncer", name)
	case ns.GetDeletionTimestamp() != nil:
		return false, fmt.Errorf("downstream namespace %s is terminating; it is created again once gone", name)
	}
	return false, nil
}

// QuiesceAsked tells whether a relocate quiesced the hub namespace called name, which the
// syncer reads from its cache, else directly: its workloads are not to run.
func QuiesceAsked(ctx context.Context, cached, direct client.Reader, name string) (bool, *unstructured.Unstructured, error) {
	ns, err := Read(ctx, cached, direct, NamespaceGVK, client.ObjectKey{Name: name})
	if err != nil || ns == nil {
		return false, nil, err
	}
	return ns.GetAnnotations()[schedulingv1alpha1.QuiesceAnnotation] != "", ns, nil
}
