package syncio

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Requests maps an object the target's syncer made in the member to the hub object it stands
// for, named as Upstream names it.
func Requests(t transform.Target, isNamespace bool) handler.MapFunc {
	return func(_ context.Context, obj client.Object) []reconcile.Request {
		key, ok := t.Upstream(obj, isNamespace)
		if !ok || !t.Owns(obj) {
			return nil
		}
		return []reconcile.Request{{NamespacedName: key}}
	}
}

// ClaimOfVolume maps a PV to a request for the claim its claimRef points at.
func ClaimOfVolume(_ context.Context, obj client.Object) []reconcile.Request {
	if key, ok := transform.ClaimOf(obj.(*unstructured.Unstructured)); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}
