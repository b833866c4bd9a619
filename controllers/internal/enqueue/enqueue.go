package enqueue

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// All maps any event to a request for every object that a list of the kind newList makes
// holds, listed with opts from the reader; opts may depend on the event's object. A failed
// list is logged and maps to nothing.
func All(c client.Reader, newList func() client.ObjectList, opts func(client.Object) []client.ListOption) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		list := newList()
		var o []client.ListOption
		if opts != nil {
			o = opts(obj)
		}
		if err := c.List(ctx, list, o...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing objects to reconcile", "list", list.GetObjectKind().GroupVersionKind().Kind)
			return nil
		}
		var out []reconcile.Request
		_ = meta.EachListItem(list, func(item runtime.Object) error {
			if o, ok := item.(client.Object); ok {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)})
			}
			return nil
		})
		return out
	}
}

// InNamespaceOf lists in the namespace named by the event's object: for a namespace, its
// own name.
func InNamespaceOf(obj client.Object) []client.ListOption {
	return []client.ListOption{client.InNamespace(obj.GetName())}
}
