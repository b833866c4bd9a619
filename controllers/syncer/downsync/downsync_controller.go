package downsync

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Reconciler syncs the hub objects of one kind down to a member. Requests name hub objects.
type Reconciler struct {
	syncio.Clients
	// Target is the target key and the hub's identity.
	Target transform.Target
	// SyncTargetName names the SyncTarget whose node selector and tolerations go into pod
	// templates.
	SyncTargetName string
	// GVK is the kind this reconciler syncs.
	GVK schema.GroupVersionKind
	// Contents are the namespaced kinds the syncer syncs. When GVK is Namespace, a downstream
	// namespace stays while a hub object of these kinds in it is synced to the target.
	Contents []schema.GroupVersionKind
	// Recorder records events on hub objects: a replica a claim is restored from that is
	// missing, a member object of the same name that the syncer did not create.
	Recorder events.EventRecorder

	// finalized are the versions of hub objects that the syncer's finalizer patches replaced.
	finalized *versions.Replaced
}

// SetupWithManager registers the reconciler with the member's manager; hub is the hub
// cluster, whose cache the syncer set up.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = hub.GetEventRecorder("custody-syncer")
	}
	r.finalized = versions.NewReplaced()
	name := "downsync-" + strings.ToLower(r.GVK.Kind)
	if r.GVK.Group != "" {
		name += "." + r.GVK.Group
	}
	b := ctrl.NewControllerManagedBy(mgr).Named(name).WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(r.GVK)), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(r.GVK)), handler.EnqueueRequestsFromMapFunc(r.fromDownstream)))
	gk := r.GVK.GroupKind()
	if gk == transform.NamespaceKind {
		for _, gvk := range r.Contents {
			b = b.WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(gvk)), handler.EnqueueRequestsFromMapFunc(namespaceOf)))
		}
	}
	if gk == transform.PVCKind {
		b = b.WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(syncio.ClaimOfVolume)))
		// A claim's copy waits for the copy of its PV (see volumeCopied).
		made := predicate.Funcs{
			UpdateFunc:  func(event.UpdateEvent) bool { return false },
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		}
		b = b.WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(r.claimOfCopy), made))
	}
	if gk == transform.PVKind {
		// A claim's copy made as the claim is deleted waits for its PV (see claimGone).
		made := predicate.Funcs{
			UpdateFunc:  replaced,
			DeleteFunc:  func(event.DeleteEvent) bool { return false },
			GenericFunc: func(event.GenericEvent) bool { return false },
		}
		b = b.WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), handler.EnqueueRequestsFromMapFunc(r.volumeOfCopy), made))
		// A claim that leaves the target may be all that frees a PV the member provisioned
		// for it (see originOfClaim).
		left := predicate.Funcs{
			CreateFunc:  func(event.CreateEvent) bool { return false },
			UpdateFunc:  replaced,
			GenericFunc: func(event.GenericEvent) bool { return false },
		}
		b = b.WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), handler.EnqueueRequestsFromMapFunc(r.originOfClaim), left))
	}
	if transform.HasPodTemplate(gk) {
		// The SyncTarget's placement goes into the pod templates of every object of the kind.
		everyObject := enqueue.All(r.Hub, func() client.ObjectList { return transform.EmptyList(r.GVK) }, nil)
		b = b.WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&workloadv1alpha1.SyncTarget{}),
			handler.EnqueueRequestsFromMapFunc(everyObject), predicate.GenerationChangedPredicate{}))
		// A relocate stops and starts the namespace's workloads with an annotation.
		inNamespace := enqueue.All(r.Hub, func() client.ObjectList { return transform.EmptyList(r.GVK) }, enqueue.InNamespaceOf)
		b = b.WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.NamespaceGVK)),
			handler.EnqueueRequestsFromMapFunc(inNamespace), predicate.AnnotationChangedPredicate{}))
	}
	return b.Complete(r)
}

// fromDownstream maps a downstream object the syncer created to its hub object, and a PV
// the member provisioned to the hub PV it was upsynced as: by the syncer's mark, or, for
// one upsynced unmarked, by the hub PVs that name it.
func (r *Reconciler) fromDownstream(ctx context.Context, obj client.Object) []reconcile.Request {
	if key, ok := r.Target.Upstream(obj, r.GVK.GroupKind() == transform.NamespaceKind); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	if r.GVK.GroupKind() != transform.PVKind {
		return nil
	}
	hubPVs := transform.EmptyList(transform.PVGVK)
	if err := r.Hub.List(ctx, hubPVs, client.MatchingFields{syncio.MemberPVIndex: obj.GetName()}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the hub PVs upsynced from a member PV", "memberPV", obj.GetName())
		return nil
	}
	out := make([]reconcile.Request, 0, len(hubPVs.Items))
	for _, pv := range hubPVs.Items {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: pv.GetName()}})
	}
	return out
}

// claimOfCopy maps the member's copy of a hub PV to the hub claim the hub PV is bound to.
func (r *Reconciler) claimOfCopy(ctx context.Context, obj client.Object) []reconcile.Request {
	key, ok := r.Target.Upstream(obj, false)
	if !ok {
		return nil
	}
	pv, err := syncio.Read(ctx, r.Hub, nil, transform.PVGVK, key)
	if err != nil || pv == nil {
		return nil
	}
	return syncio.ClaimOfVolume(ctx, pv)
}

// volumeOfCopy maps the member's copy of a claim to the hub PV its hub claim names.
func (r *Reconciler) volumeOfCopy(ctx context.Context, obj client.Object) []reconcile.Request {
	key, ok := r.Target.Upstream(obj, false)
	if !ok {
		return nil
	}
	claim, err := syncio.Read(ctx, r.Hub, nil, transform.PVCGVK, key)
	if err != nil || claim == nil {
		return nil // a claim the cache does not hold is not the target's any more
	}
	if name, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName"); name != "" {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
	}
	return nil
}

// replaced tells an update that is an object made again under its name: a cache that listed
// again after its watch broke shows the deletion of the one and the creation of the other so.
func replaced(e event.UpdateEvent) bool { return e.ObjectOld.GetUID() != e.ObjectNew.GetUID() }

// originOfClaim maps a hub claim that left the target to the hub PV that a PV the member
// provisioned for it was marked as, when the member has such a PV. The hub may never have
// recorded that PV, as when the upsync did not get through before the claim was taken
// away: the member's PV then went Released before the claim left, and the claim's going is
// the only news that the hub gives the target neither any more. A PV the syncer made for a
// hub PV is that hub PV's to wake.
func (r *Reconciler) originOfClaim(ctx context.Context, claim client.Object) []reconcile.Request {
	name := workloadv1alpha1.UpsyncedPVName(claim.GetUID())
	list := transform.EmptyList(transform.PVGVK)
	if err := r.Member.List(ctx, list, client.MatchingFields{syncio.HubPVIndex: name}, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the member PVs upsynced for a claim", "claim", client.ObjectKeyFromObject(claim))
		return nil
	}
	for i := range list.Items {
		if _, _, ok := r.Target.Origin(&list.Items[i]); ok && !r.Target.Owns(&list.Items[i]) {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: name}}}
		}
	}
	return nil
}

// namespaceOf maps a hub object to its namespace.
func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
}

// Reconcile brings the downstream copy of one hub object in line with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	up, err := r.upstream(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	down, err := r.downstream(ctx, req.NamespacedName, up)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case up == nil:
		r.finalized.Forget(req.NamespacedName) // not the target's any more
		if down != nil && r.Target.Owns(down) {
			if err := r.orphaned(ctx, req.NamespacedName); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.removeOrphan(ctx, req.NamespacedName, down)
	case r.Target.RemovalRequested(up):
		return ctrl.Result{}, r.remove(ctx, up, down)
	}
	if quiesced, err := r.quiesced(ctx, up); err != nil || quiesced {
		if err != nil {
			return ctrl.Result{}, err
		}
		// Its copy goes; the hub object stays synced to the target, which runs it again
		// once the relocate is over, or removes it as the namespace leaves.
		return ctrl.Result{}, r.removeOrphan(ctx, req.NamespacedName, down)
	}
	err = r.sync(ctx, up, down)
	if errors.Is(err, errVolumeNotCopied) {
		ctrl.LoggerFrom(ctx).V(1).Info("The claim's copy waits for its PV's", "reason", err.Error())
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, err
}

// quiesced tells whether up runs pods in a namespace that a relocate quiesced, or that
// leaves the target: no workload starts in it here any more, not even while the removal
// request comes down to the object.
func (r *Reconciler) quiesced(ctx context.Context, up *unstructured.Unstructured) (bool, error) {
	if !transform.HasPodTemplate(r.GVK.GroupKind()) || up.GetNamespace() == "" {
		return false, nil
	}
	asked, ns, err := syncio.QuiesceAsked(ctx, r.Hub, r.HubReader, up.GetNamespace())
	if err != nil || ns == nil {
		return false, err
	}
	leaving, _ := workloadv1alpha1.RemovalRequested(ns, r.Target.Key)
	return leaving || asked, nil
}

// upstream returns the hub object when it is labelled Sync for the target in a namespace
// placed on the target, or when it is a PV upsynced from the target that coordination asks
// to leave it, else nil: the member's own PV then goes as a synced copy does, and the hub is
// told once it is gone.
func (r *Reconciler) upstream(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, error) {
	return r.upstreamFrom(ctx, r.Hub, r.HubReader, key)
}

// upstreamFrom is upstream read from cached, and a namespace cached does not hold from direct,
// unless direct is nil.
func (r *Reconciler) upstreamFrom(ctx context.Context, cached, direct client.Reader, key types.NamespacedName) (*unstructured.Unstructured, error) {
	up, err := syncio.Read(ctx, cached, nil, r.GVK, key)
	if err != nil || up == nil {
		return nil, err
	}
	switch state, _ := r.Target.State(up); {
	case state == workloadv1alpha1.ResourceStateSync:
		if placed, err := r.namespacePlaced(ctx, cached, direct, key.Namespace); err != nil || !placed {
			return nil, err
		}
		return up, nil
	case state == workloadv1alpha1.ResourceStateUpsync && r.GVK.GroupKind() == transform.PVKind && r.Target.LeaveRequested(up):
		return up, nil
	}
	return nil, nil
}

// namespacePlaced tells whether the hub namespace ns is placed on the target; a cluster-scoped
// object ("") is in none. Only a Placement decides where objects run: a state label on an
// object of a namespace placed elsewhere, or nowhere, is not the target's, whoever wrote it.
// A namespace cached does not hold is read from direct, as a cache may not yet show the
// placement of the namespace whose object came up.
func (r *Reconciler) namespacePlaced(ctx context.Context, cached, direct client.Reader, ns string) (bool, error) {
	if ns == "" {
		return true, nil
	}
	namespace, err := syncio.Read(ctx, cached, direct, transform.NamespaceGVK, client.ObjectKey{Name: ns})
	if err != nil || namespace == nil {
		return false, err
	}
	_, placed := r.Target.State(namespace)
	if !placed {
		ctrl.LoggerFrom(ctx).V(1).Info("Object labelled for the target in a namespace not placed on it", "namespace", ns)
	}
	return placed, nil
}

// downstream returns the downstream object standing for the hub object key, whoever created
// it, from the cache, which holds what the syncer made, every claim and every PV; nil when
// it holds none. Without the hub object, a PV is found by the syncer's annotations, as its
// name may be the member's own. What the syncer does because there is no copy, it confirms
// past the cache first (confirmed).
func (r *Reconciler) downstream(ctx context.Context, key types.NamespacedName, up *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if up == nil {
		if r.GVK.GroupKind() == transform.PVKind {
			return r.downstreamPV(ctx, key.Name)
		}
		up = transform.Empty(r.GVK)
		up.SetNamespace(key.Namespace)
		up.SetName(key.Name)
	}
	return syncio.Read(ctx, r.Member, nil, r.GVK, r.downstreamKey(up))
}

// confirmed returns down, or, when the cache showed no copy of up, what the member itself
// holds under the copy's name. The cache may not show yet an object made a moment ago:
// by someone else, which a copy applied over it would take over, or by the syncer, whose
// hub object would be told that its copy is gone.
func (r *Reconciler) confirmed(ctx context.Context, up, down *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if down != nil {
		return down, nil
	}
	return syncio.Read(ctx, r.MemberReader, nil, r.GVK, r.downstreamKey(up))
}

func (r *Reconciler) downstreamKey(up *unstructured.Unstructured) client.ObjectKey {
	return client.ObjectKey{Namespace: r.Target.DownstreamNamespace(up), Name: r.Target.DownstreamName(up)}
}

// downstreamPV finds the PV the syncer created or took over for the hub PV called name, or
// the one the member provisioned and the syncer upsynced as it.
func (r *Reconciler) downstreamPV(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	list := transform.EmptyList(transform.PVGVK)
	if err := r.Member.List(ctx, list, client.MatchingFields{syncio.HubPVIndex: name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		if _, ok := r.Target.Upstream(&list.Items[i], false); ok {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}
