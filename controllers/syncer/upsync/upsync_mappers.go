package upsync

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// fromDownstreamClaim maps a downstream claim the syncer created to its hub claim, and one
// the member made itself in one of the syncer's namespaces, once bound, to the hub claim of
// its name, which adopts it: as the member PV bound to it does (fromBoundNamespace), which
// the cache may show before the claim.
func (r *Reconciler) fromDownstreamClaim(ctx context.Context, obj client.Object) []reconcile.Request {
	if key, ok := r.Target.Upstream(obj, false); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	if volume, _, _ := unstructured.NestedString(obj.(*unstructured.Unstructured).Object, "spec", "volumeName"); volume == "" {
		return nil
	}
	return r.hubClaimOf(ctx, client.ObjectKeyFromObject(obj))
}

// fromMemberPV maps a member PV to the hub claim of the downstream claim it is bound to, and
// to the hub claims of the hub PVs upsynced from it, which must follow it when it goes.
func (r *Reconciler) fromMemberPV(ctx context.Context, obj client.Object) []reconcile.Request {
	var reqs []reconcile.Request
	if key, ok := transform.ClaimOf(obj.(*unstructured.Unstructured)); ok {
		claim := transform.Empty(transform.PVCGVK)
		if err := r.Member.Get(ctx, key, claim); err == nil {
			reqs = append(reqs, r.fromDownstreamClaim(ctx, claim)...)
		}
	}
	hubPVs := transform.EmptyList(transform.PVGVK)
	if err := r.Hub.List(ctx, hubPVs, client.MatchingFields{syncio.MemberPVIndex: obj.GetName()}, client.UnsafeDisableDeepCopy); err != nil {
		return reqs
	}
	for i := range hubPVs.Items {
		reqs = append(reqs, syncio.ClaimOfVolume(ctx, &hubPVs.Items[i])...)
	}
	return reqs
}
