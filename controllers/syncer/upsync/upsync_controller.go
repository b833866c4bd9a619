package upsync

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// pvProtection is the finalizer an API server puts on every PV.
const pvProtection = "kubernetes.io/pv-protection"

// Reconciler upsyncs the PVs a member provisions for the claims synced to it. Requests name
// hub claims.
type Reconciler struct {
	// Hub reads the hub through the syncer's cache (objects labelled Sync or Upsync for the
	// target) and writes to the hub.
	Hub client.Client
	// HubReader reads the hub directly, for PVs the cache does not hold.
	HubReader client.Reader
	// Member reads the member through the syncer's cache, which holds the claims the syncer
	// created and every PV.
	Member client.Client
	// MemberReader reads the member directly.
	MemberReader client.Reader
	// Target is the target key and the hub's identity.
	Target transform.Target
}

// SetupWithManager registers the reconciler with the member's manager; hub is the hub
// cluster.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named("upsync-persistentvolume").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(claimOf))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVCGVK)), handler.EnqueueRequestsFromMapFunc(r.fromDownstreamClaim))).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(transform.Empty(transform.PVGVK)), handler.EnqueueRequestsFromMapFunc(r.fromMemberPV))).
		Complete(r)
}

// claimOf maps a hub PV to the hub claim its claimRef names.
func claimOf(_ context.Context, obj client.Object) []reconcile.Request {
	if key, ok := transform.ClaimOf(obj.(*unstructured.Unstructured)); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
}

// fromDownstreamClaim maps a downstream claim the syncer created to its hub claim.
func (r *Reconciler) fromDownstreamClaim(_ context.Context, obj client.Object) []reconcile.Request {
	if key, ok := r.Target.Upstream(obj, false); ok {
		return []reconcile.Request{{NamespacedName: key}}
	}
	return nil
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
	if err := r.Hub.List(ctx, hubPVs); err != nil {
		return reqs
	}
	for i := range hubPVs.Items {
		if hubPVs.Items[i].GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)] == obj.GetName() {
			reqs = append(reqs, claimOf(ctx, &hubPVs.Items[i])...)
		}
	}
	return reqs
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

// provisioned returns the hub claim and the member PV to upsync for it: the hub claim is
// synced to the target, its downstream copy (created by the syncer) is Bound, and the PV it
// is bound to was not made by the syncer. Both are nil when there is nothing to upsync.
func (r *Reconciler) provisioned(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, *corev1.PersistentVolume, error) {
	claim := transform.Empty(transform.PVCGVK)
	if err := r.Hub.Get(ctx, key, claim); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if state, _ := r.Target.State(claim); state != workloadv1alpha1.ResourceStateSync {
		return nil, nil, nil
	}
	down := transform.Empty(transform.PVCGVK)
	if err := r.Member.Get(ctx, types.NamespacedName{Namespace: r.Target.Namespace(key.Namespace), Name: key.Name}, down); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	phase, _, _ := unstructured.NestedString(down.Object, "status", "phase")
	volumeName, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	if !r.Target.Owns(down) || phase != string(corev1.ClaimBound) || volumeName == "" {
		return nil, nil, nil
	}
	memberPV := transform.Empty(transform.PVGVK)
	if err := r.Member.Get(ctx, client.ObjectKey{Name: volumeName}, memberPV); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if r.Target.Owns(memberPV) {
		return nil, nil, nil
	}
	pv := &corev1.PersistentVolume{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(memberPV.Object, pv); err != nil {
		return nil, nil, err
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != down.GetUID() {
		return nil, nil, nil
	}
	return claim, pv, nil
}

// ensureHubPV creates the hub PV, or keeps it in line with the member's while it is labelled
// Upsync for the target. Labels and annotations others put on it stay.
func (r *Reconciler) ensureHubPV(ctx context.Context, want *corev1.PersistentVolume) error {
	log := ctrl.LoggerFrom(ctx).WithValues("hubPV", want.Name, "memberPV", want.Annotations[workloadv1alpha1.PVNameAnnotation(r.Target.Key)])
	cur, err := r.hubPV(ctx, want.Name)
	if err != nil {
		return err
	}
	if cur == nil {
		created := want.DeepCopy()
		if err := r.Hub.Create(ctx, created); err != nil {
			return err
		}
		log.Info("Upsynced volume", "handle", volumeHandle(want))
		return r.ensureHubStatus(ctx, created, want.Status)
	}
	if state, _ := r.Target.State(cur); state != workloadv1alpha1.ResourceStateUpsync {
		log.V(1).Info("Hub PV no longer upsynced from the target", "state", state)
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = merged(next.Labels, want.Labels)
	next.Annotations = merged(next.Annotations, want.Annotations)
	next.Spec = want.Spec
	if !equality.Semantic.DeepEqual(cur.ObjectMeta, next.ObjectMeta) || !equality.Semantic.DeepEqual(cur.Spec, next.Spec) {
		if err := r.Hub.Update(ctx, next); err != nil {
			return err
		}
		log.Info("Updated upsynced volume")
	}
	return r.ensureHubStatus(ctx, next, want.Status)
}

// ensureHubStatus sets the hub PV's status to the member PV's.
func (r *Reconciler) ensureHubStatus(ctx context.Context, pv *corev1.PersistentVolume, status corev1.PersistentVolumeStatus) error {
	if equality.Semantic.DeepEqual(pv.Status, status) {
		return nil
	}
	orig := pv.DeepCopy()
	pv.Status = status
	return r.Hub.Status().Patch(ctx, pv, client.MergeFrom(orig))
}

// hubPV reads a hub PV from the cache, else directly, as one not labelled for the target is
// not cached; nil when it does not exist.
func (r *Reconciler) hubPV(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	obj := transform.Empty(transform.PVGVK)
	err := r.Hub.Get(ctx, client.ObjectKey{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		err = r.HubReader.Get(ctx, client.ObjectKey{Name: name}, obj)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	pv := &corev1.PersistentVolume{}
	return pv, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pv)
}

// pruneUpsynced deletes the hub PVs upsynced for the hub claim key while their member PV no
// longer exists: in the Upsync state the member is the source, and a hub record of a PV it
// no longer has would hand a dead volume to the next target.
func (r *Reconciler) pruneUpsynced(ctx context.Context, key types.NamespacedName) error {
	hubPVs := transform.EmptyList(transform.PVGVK)
	if err := r.Hub.List(ctx, hubPVs, client.MatchingLabels{r.Target.StateLabel(): string(workloadv1alpha1.ResourceStateUpsync)}); err != nil {
		return err
	}
	for i := range hubPVs.Items {
		hubPV := &hubPVs.Items[i]
		claim, _ := transform.ClaimOf(hubPV)
		memberName := hubPV.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)]
		if claim != key || memberName == "" {
			continue
		}
		err := r.Member.Get(ctx, client.ObjectKey{Name: memberName}, transform.Empty(transform.PVGVK))
		if apierrors.IsNotFound(err) {
			err = r.MemberReader.Get(ctx, client.ObjectKey{Name: memberName}, transform.Empty(transform.PVGVK))
		}
		if !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
			continue
		}
		if err := r.deleteRecord(ctx, hubPV); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Removed an upsynced volume whose member PV is gone", "hubPV", hubPV.GetName(), "memberPV", memberName)
	}
	return nil
}

// deleteRecord deletes a hub PV the syncer upsynced. The hub's API server puts the PV
// protection finalizer on every PV, and the hub runs no controller that would ever remove
// it: the record is the syncer's, so it lets go of it too.
func (r *Reconciler) deleteRecord(ctx context.Context, hubPV *unstructured.Unstructured) error {
	if hubPV.GetDeletionTimestamp() == nil {
		uid := hubPV.GetUID()
		if err := r.Hub.Delete(ctx, hubPV, client.Preconditions{UID: &uid}); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	if !controllerutil.ContainsFinalizer(hubPV, pvProtection) {
		return nil
	}
	orig := hubPV.DeepCopy()
	controllerutil.RemoveFinalizer(hubPV, pvProtection)
	return client.IgnoreNotFound(r.Hub.Patch(ctx, hubPV, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}

func merged(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	maps.Copy(into, from)
	return into
}

func volumeHandle(pv *corev1.PersistentVolume) string {
	if pv.Spec.CSI == nil {
		return ""
	}
	return pv.Spec.CSI.VolumeHandle
}
