package upsync

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Reconciler upsyncs the PVs a member provisions for the claims synced to it. Requests name
// hub claims.
type Reconciler struct {
	syncio.Clients
	// Target is the target key and the hub's identity.
	Target transform.Target
	// Recorder records events on hub claims, about the claims the member made itself.
	Recorder events.EventRecorder
	// reported are the versions of hub PVs that the syncer's status applies replaced.
	reported *versions.Replaced
}

// SetupWithManager registers the reconciler with the member's manager; hub is the hub
// cluster.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = hub.GetEventRecorder("custody-syncer")
	}
	r.reported = versions.NewReplaced()
	return ctrl.NewControllerManagedBy(mgr).Named("upsync-persistentvolume").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(syncio.ClaimOfVolume))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), handler.EnqueueRequestsFromMapFunc(r.fromDownstreamClaim))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(r.fromMemberPV))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(r.fromBoundNamespace))).
		Complete(r)
}

// fromBoundNamespace maps a member PV bound to a claim in one of the syncer's namespaces to
// the hub claim of the claim's name, whoever made the member's claim: one the member made
// itself is adopted.
func (r *Reconciler) fromBoundNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	if key, ok := transform.ClaimOf(obj.(*unstructured.Unstructured)); ok {
		return r.hubClaimOf(ctx, key)
	}
	return nil
}

// hubClaimOf maps a member claim, in one of the syncer's namespaces, to the hub claim of its
// name.
func (r *Reconciler) hubClaimOf(ctx context.Context, key types.NamespacedName) []reconcile.Request {
	ns := transform.Empty(transform.NamespaceGVK)
	if err := r.Member.Get(ctx, client.ObjectKey{Name: key.Namespace}, ns); err != nil {
		return nil
	}
	hubNamespace, ok := r.Target.Upstream(ns, true)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: hubNamespace.Name, Name: key.Name}}}
}

// Reconcile upsyncs the PV bound to the downstream copy of one hub claim, when the member
// provisioned it, marking the member's PV first, and removes upsynced hub PVs of the claim
// whose member PV is gone. A claim of that name the member made itself is adopted first.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if err := r.pruneUpsynced(ctx, req.NamespacedName); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.adopt(ctx, req.NamespacedName); err != nil {
		return ctrl.Result{}, err
	}
	claim, pv, copied, err := r.provisioned(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if pv == nil {
		r.reported.Forget(req.NamespacedName) // no volume of the claim to upsync
		return ctrl.Result{}, nil
	}
	want := r.Target.UpsyncPV(pv, claim)
	if err := r.markOrigin(ctx, pv, want.Name, req.NamespacedName, copied); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.ensureHubPV(ctx, req.NamespacedName, want)
}
