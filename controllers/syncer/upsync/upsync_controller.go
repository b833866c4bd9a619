package upsync

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Reconciler upsyncs the PVs a member provisions for the claims synced to it. Requests name
// hub claims.
type Reconciler struct {
	transform.Clients
	// Target is the target key and the hub's identity.
	Target transform.Target
}

// SetupWithManager registers the reconciler with the member's manager; hub is the hub
// cluster.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named("upsync-persistentvolume").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(transform.ClaimOfVolume))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), handler.EnqueueRequestsFromMapFunc(r.fromDownstreamClaim))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(r.fromMemberPV))).
		Complete(r)
}

// Reconcile upsyncs the PV bound to the downstream copy of one hub claim, when the member
// provisioned it, and removes upsynced hub PVs of the claim whose member PV is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.pruneUpsynced(ctx, req.NamespacedName); err != nil {
		return ctrl.Result{}, err
	}
	claim, pv, err := r.provisioned(ctx, req.NamespacedName)
	if err != nil || pv == nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.ensureHubPV(ctx, r.Target.UpsyncPV(pv, claim))
}
