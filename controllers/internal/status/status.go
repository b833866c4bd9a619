package status

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Apply writes the status of obj as the field manager owner: the fields set in obj.status
// become owner's, and the fields owner set before and obj leaves out are removed. Only the
// name and namespace of obj's metadata are sent. obj may be typed or unstructured; on
// success it gets the resourceVersion written, so that a writer can tell its cache's copy
// from what it wrote.
func Apply(ctx context.Context, c client.Client, obj client.Object, owner string) error {
	content, err := contentOf(obj)
	if err != nil {
		return err
	}
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	u.SetName(obj.GetName())
	u.SetNamespace(obj.GetNamespace())
	st, _ := content["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
	}
	u.Object["status"] = withoutEmptyObjects(st)
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(owner), client.ForceOwnership); err != nil {
		return err
	}
	obj.SetResourceVersion(u.GetResourceVersion())
	return nil
}

// withoutEmptyObjects returns m without the objects in it, at any depth, that hold nothing,
// as a typed struct that is all zero becomes: applied, such an object would read as null to
// the API server and fail a schema that asks for an object, where leaving it out gives the
// field up as the owner's.
func withoutEmptyObjects(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if o, ok := v.(map[string]any); ok {
			if o = withoutEmptyObjects(o); len(o) == 0 {
				continue
			}
			v = o
		}
		out[k] = v
	}
	return out
}

func contentOf(obj client.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
}

// Condition returns c as it goes into a list that holds current: with the transition time
// of the current condition of its type while the status stays, else now.
func Condition(current []metav1.Condition, c metav1.Condition) metav1.Condition {
	list := []metav1.Condition{}
	if old := meta.FindStatusCondition(current, c.Type); old != nil {
		list = append(list, *old)
	}
	meta.SetStatusCondition(&list, c)
	return *meta.FindStatusCondition(list, c.Type)
}

// Changed tells whether the condition differs from the current one of its type in
// anything but its transition time.
func Changed(current []metav1.Condition, c metav1.Condition) bool {
	old := meta.FindStatusCondition(current, c.Type)
	return old == nil || old.Status != c.Status || old.Reason != c.Reason || old.Message != c.Message ||
		old.ObservedGeneration != c.ObservedGeneration
}
