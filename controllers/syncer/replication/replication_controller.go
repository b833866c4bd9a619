package replication

import (
	"context"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Reconciler carries out the VolumeReplications the hub gives the syncer's target.
type Reconciler struct {
	syncio.Clients
	Target transform.Target
	// SyncTargetName names the target in its reports.
	SyncTargetName string
}

// SetupWithManager watches the target's VolumeReplications on the hub and the annotations of
// their namespaces (a relocate quiesces them), and the ReplicationSources,
// ReplicationDestinations and copies of the pair's key the syncer made in the member, and
// looks once at start at the VolumeReplications the syncer's finalizer holds.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	inNamespace := enqueue.All(r.Hub, func() client.ObjectList { return &storagev1alpha1.VolumeReplicationList{} }, enqueue.InNamespaceOf)
	return ctrl.NewControllerManagedBy(mgr).Named("replication").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&storagev1alpha1.VolumeReplication{}), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.NamespaceGVK)),
			handler.EnqueueRequestsFromMapFunc(inNamespace), predicate.AnnotationChangedPredicate{})).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(&volsyncv1alpha1.ReplicationSource{}), handler.EnqueueRequestsFromMapFunc(syncio.Requests(r.Target, false)))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(&volsyncv1alpha1.ReplicationDestination{}), handler.EnqueueRequestsFromMapFunc(syncio.Requests(r.Target, false)))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(&corev1.Secret{}), handler.EnqueueRequestsFromMapFunc(r.keyRequests))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.NamespaceGVK)),
			handler.EnqueueRequestsFromMapFunc(downstreamOf(inNamespace)), deleted)).
		WatchesRawSource(syncio.AtStart()).
		Complete(r)
}

// deleted passes deletions only.
var deleted = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	UpdateFunc:  func(event.UpdateEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// downstreamOf maps a downstream namespace of the member, once gone, to the VolumeReplications
// of its hub namespace: one that found it terminating (the target cleaned up after a switch
// took its namespaces away, and a replication back to it came) makes it again at once rather
// than after its retries' back-off.
func downstreamOf(inHubNamespace handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []ctrl.Request {
		hub := obj.GetAnnotations()[transform.HubNamespaceAnnotation]
		if hub == "" {
			return nil
		}
		stub := transform.Empty(transform.NamespaceGVK)
		stub.SetName(hub)
		return inHubNamespace(ctx, stub)
	}
}

// keyRequests maps a copy of the pair's key that the syncer made to its VolumeReplication. A
// clean-up that found the copy of the key left, its ReplicationSource or
// ReplicationDestination gone already (a syncer stopped between the two deletions), is
// back once the copy is gone, to let go of the VolumeReplication. Other Secrets the syncer
// made are the hub's Secrets' copies: they map to nothing.
func (r *Reconciler) keyRequests(ctx context.Context, obj client.Object) []ctrl.Request {
	reqs := syncio.Requests(r.Target, false)(ctx, obj)
	if len(reqs) != 1 || obj.GetName() != keyName(reqs[0].Name) {
		return nil
	}
	return reqs
}

// keyGrantWait is how long after a VolumeReplication came a refused read of its pair's key
// is taken for the grant still on its way, looked at again every keyGrantRecheck; later, it
// is an error, reported and retried with back-off.
const (
	keyGrantWait    = 30 * time.Second
	keyGrantRecheck = 500 * time.Millisecond
)

// role is what the target does for a VolumeReplication.
type role int

const (
	none role = iota
	sends
	receives
)

func (r *Reconciler) role(vr *storagev1alpha1.VolumeReplication) role {
	switch {
	case vr == nil || !vr.DeletionTimestamp.IsZero():
		return none
	case vr.Spec.Source == r.Target.Key:
		return sends
	case vr.Spec.Destination == r.Target.Key:
		return receives
	}
	return none
}

// Reconcile keeps the member's side of one VolumeReplication as its spec says, and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req == syncio.HeldRequest {
		// A syncer stopped after it deleted its side of a replication that left its target,
		// and before it let go, holds it.
		return ctrl.Result{}, syncio.ReconcileHeld(ctx, r.HubReader, r.Target, &storagev1alpha1.VolumeReplicationList{}, r.Reconcile)
	}
	vr := &storagev1alpha1.VolumeReplication{}
	if err := r.Hub.Get(ctx, req.NamespacedName, vr); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		vr = nil
	}
	role := r.role(vr)
	if role == none {
		return ctrl.Result{}, r.cleanUp(ctx, req.NamespacedName)
	}
	// The finalizer goes on before anything of the replication exists in the member.
	if err := syncio.Hold(ctx, r.Hub, r.Target, vr); err != nil {
		return ctrl.Result{}, err
	}
	ns := r.Target.Namespace(vr.Namespace)
	if _, err := syncio.EnsureNamespace(ctx, r.Clients, r.Target, vr.Namespace); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureKey(ctx, vr, ns); err != nil {
		if apierrors.IsForbidden(err) && time.Since(vr.CreationTimestamp.Time) < keyGrantWait {
			// The hub grants a replication's targets its pair's key once the replication
			// exists: moments after it came.
			ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the grant of the pair's key", "error", err.Error())
			return ctrl.Result{RequeueAfter: keyGrantRecheck}, nil
		}
		return ctrl.Result{}, r.reportError(ctx, vr, role, err)
	}
	if err := r.retire(ctx, role, ns, vr.Name); err != nil {
		return ctrl.Result{}, err
	}
	if role == sends {
		return r.send(ctx, vr, ns)
	}
	return r.receive(ctx, vr, ns)
}

// retire deletes the member's side of the role the target no longer has, once the
// replication reversed: a ReplicationDestination left listening holds its volume, and a
// ReplicationSource left syncs from a claim that went.
func (r *Reconciler) retire(ctx context.Context, now role, ns, name string) error {
	var old client.Object = &volsyncv1alpha1.ReplicationDestination{}
	if now == receives {
		old = &volsyncv1alpha1.ReplicationSource{}
	}
	err := r.Member.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName(name)}, old)
	if err != nil || !r.Target.Owns(old) || !old.GetDeletionTimestamp().IsZero() {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleting the side of a replication that reversed", "object", client.ObjectKeyFromObject(old))
	return client.IgnoreNotFound(r.Member.Delete(ctx, old))
}

// cleanUp deletes what the syncer made in the member for a VolumeReplication that is not
// its target's (any more), and then takes its finalizer off it.
func (r *Reconciler) cleanUp(ctx context.Context, key types.NamespacedName) error {
	ns := r.Target.Namespace(key.Namespace)
	left := false
	for _, obj := range []client.Object{&volsyncv1alpha1.ReplicationSource{}, &volsyncv1alpha1.ReplicationDestination{}, &corev1.Secret{}} {
		name := objectName(key.Name)
		if _, ok := obj.(*corev1.Secret); ok {
			name = keyName(key.Name)
		}
		err := r.MemberReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if !r.Target.Owns(obj) {
			continue
		}
		left = true
		if obj.GetDeletionTimestamp().IsZero() {
			if err := r.SameHub.Confirm(ctx); err != nil {
				return err
			}
			ctrl.LoggerFrom(ctx).Info("Deleting what a replication no longer needs", "object", client.ObjectKeyFromObject(obj))
			if err := r.Member.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	if left {
		return nil // back with the deletion events
	}
	vr := &storagev1alpha1.VolumeReplication{}
	if err := r.HubReader.Get(ctx, key, vr); err != nil {
		return client.IgnoreNotFound(err)
	}
	return syncio.LetGo(ctx, r.Hub, r.Target, vr)
}

// objectName is the name of the ReplicationSource or ReplicationDestination of a
// VolumeReplication, and keyName that of its copy of the pair's key.
func objectName(vr string) string { return "custody-" + vr }
func keyName(vr string) string    { return "custody-replication-" + vr }
