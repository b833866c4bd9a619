package downsync

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/packedcache"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// remove runs the deletion flow of a hub object whose removal from the target is requested:
// wait for coordination finalizers, (for a namespace) wait for the objects in it, let go of
// the replica a claim's copy imported, delete the downstream copy and wait until it is gone,
// then release the hub object.
func (r *Reconciler) remove(ctx context.Context, up, down *unstructured.Unstructured) error {
	log := ctrl.LoggerFrom(ctx)
	if r.Target.Held(up) {
		log.V(1).Info("Removal held by coordination finalizers", "finalizers", up.GetAnnotations()[workloadv1alpha1.FinalizersAnnotation(r.Target.Key)])
		return nil
	}
	if waiting, err := r.holdsContents(ctx, up.GetName()); err != nil || waiting {
		return err
	}
	down, err := r.confirmed(ctx, up, down)
	if err != nil {
		return err
	}
	if err := r.dropImport(ctx, up, down); err != nil {
		return err
	}
	if down != nil && (r.Target.Owns(down) || r.provisionedFor(up, down)) {
		release := transform.ReleasePolicy(up)
		if waiting, err := r.unrecorded(ctx, up, down, release); err != nil || waiting {
			return err
		}
		return r.deleteDownstream(ctx, down, release)
	}
	if down == nil {
		if err := r.releaseLeftVolume(ctx, up); err != nil {
			return err
		}
	}
	return r.release(ctx, up)
}

// releaseLeftVolume gives the PV that the gone copy of up, a claim deleted with the release
// policy Delete, left behind the policy Delete, for the member to release the storage. The copy may
// have gone without the syncer, its PV Retain, as when the member deleted its namespace;
// coordination, told that the claim left the owner, counts the storage released. The PV is
// the member's copy of the claim's hub PV, or the one the member provisioned and the hub
// recorded for it, and still names the copy as its claim.
func (r *Reconciler) releaseLeftVolume(ctx context.Context, up *unstructured.Unstructured) error {
	if r.GVK.GroupKind() != transform.PVCKind || transform.ReleasePolicy(up) != corev1.PersistentVolumeReclaimDelete {
		return nil
	}
	hubPV, _, _ := unstructured.NestedString(up.Object, "spec", "volumeName")
	if hubPV == "" {
		hubPV = workloadv1alpha1.UpsyncedPVName(up.GetUID())
	}
	left, err := r.downstreamPV(ctx, hubPV)
	if err != nil || left == nil {
		return err
	}
	pv, err := typedPV(left)
	if err != nil {
		return err
	}
	if ref := pv.Spec.ClaimRef; ref == nil || ref.Namespace != r.Target.DownstreamNamespace(up) || ref.Name != r.Target.DownstreamName(up) {
		return nil
	}
	return r.settle(ctx, pv, corev1.PersistentVolumeReclaimDelete)
}

// unrecorded tells whether down, the copy of the hub claim up about to go with its volume
// kept, is bound to a PV the member provisioned for it that the hub has no record of yet.
// The copy then waits for the upsync, which records the PV while up is Sync for the target:
// once the copy goes, nothing records it, and the storage kept Retain would be known to
// nobody. The record's coming brings the claim back here. The record is the hub PV the
// PV's origin names, which was named after the claim's UID when it was made (a claim restored
// from an export has another UID), else the one named after the claim's UID.
func (r *Reconciler) unrecorded(ctx context.Context, up, down *unstructured.Unstructured, release corev1.PersistentVolumeReclaimPolicy) (bool, error) {
	if r.GVK.GroupKind() != transform.PVCKind || release != corev1.PersistentVolumeReclaimRetain {
		return false, nil
	}
	pv, err := r.volumeOf(ctx, down)
	if err != nil || pv == nil || r.Target.Owns(pv) || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != down.GetUID() {
		return false, err
	}
	name, _, ok := r.Target.Origin(pv)
	if !ok {
		name.Name = workloadv1alpha1.UpsyncedPVName(up.GetUID())
	}
	record, err := syncio.Read(ctx, r.Hub, r.HubReader, transform.PVGVK, client.ObjectKey{Name: name.Name})
	if err != nil || record != nil {
		return false, err
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the hub to record the volume the member provisioned before the claim leaves", "pv", pv.Name, "hubPV", name.Name)
	return true, nil
}

// removeOrphan removes the downstream copy of a hub object that is no longer synced to the
// target, if the syncer created it, or the PV the member provisioned for it once the hub
// gives neither it nor its claim to the target; once it is gone, it releases a finalizer the
// hub object may still carry.
func (r *Reconciler) removeOrphan(ctx context.Context, key types.NamespacedName, down *unstructured.Unstructured) error {
	if waiting, err := r.holdsContents(ctx, key.Name); err != nil || waiting {
		return err
	}
	if down != nil {
		return r.removeOrphanCopy(ctx, down)
	}
	up := transform.Empty(r.GVK)
	if err := r.HubReader.Get(ctx, key, up); syncio.Absent(err) {
		return nil
	} else if err != nil {
		return err
	}
	// An import made just before the claim left the target, its copy not yet made.
	if err := r.dropImport(ctx, up, nil); err != nil {
		return err
	}
	if state, _ := r.Target.State(up); state == workloadv1alpha1.ResourceStateSync || !controllerutil.ContainsFinalizer(up, r.Target.Finalizer()) {
		return nil
	}
	// The finalizer says that a copy was made.
	down, err := r.confirmed(ctx, up, nil)
	if err != nil {
		return err
	}
	if down != nil {
		return r.removeOrphanCopy(ctx, down)
	}
	// The state label is coordination's to change here: the syncer only lets go.
	orig := up.DeepCopy()
	controllerutil.RemoveFinalizer(up, r.Target.Finalizer())
	if err := r.Hub.Patch(ctx, up, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Released a hub object no longer synced to the target", "hubObject", key)
	return nil
}

// orphaned confirms past the cache that the hub object key, whose copy, made by the syncer,
// the cache shows without it, is not the target's (upstream): the cache may not show yet an
// object the hub holds, such as one an import restored a moment ago. The hub's identity is
// confirmed first (syncio.HubCheck), so that the read comes after the import completed. An
// object found the target's is an error, so that the copy stays and the object is looked at
// again. A PV the member provisioned needs no such read: originReleased reads the hub's API
// server before it goes.
func (r *Reconciler) orphaned(ctx context.Context, key types.NamespacedName) error {
	if err := r.SameHub.Confirm(ctx); err != nil {
		return err
	}
	if up, err := r.upstreamFrom(ctx, r.HubReader, nil, key); err != nil || up == nil {
		return err
	}
	return fmt.Errorf("hub %s %s is the target's, though the cache does not show it yet: its copy stays", r.GVK.Kind, key)
}

// removeOrphanCopy deletes the copy of a hub object no longer synced to the target, Retain,
// if the syncer made it, or if the member provisioned it and the hub gives neither it nor
// its claim to the target any more; a claim's copy lets go of the replica it imported first.
func (r *Reconciler) removeOrphanCopy(ctx context.Context, down *unstructured.Unstructured) error {
	if err := r.dropImport(ctx, nil, down); err != nil {
		return err
	}
	if !r.Target.Owns(down) {
		if released, err := originReleased(ctx, r.Target, r.Hub, r.HubReader, down); err != nil || !released {
			return err
		}
		if retained, err := r.retainOrigin(ctx, down.GetName()); err != nil || !retained {
			return err
		}
	}
	return r.deleteDownstream(ctx, down, corev1.PersistentVolumeReclaimRetain)
}

// originReleased tells whether pv, a PV the member provisioned and t's syncer upsynced, is
// no longer given to the target: neither its hub PV nor its hub claim is Sync or Upsync for
// it. The claim counts, as the member provisions and binds the PV before its hub PV is made;
// a claim made again under its name is another one (see transform.UpsyncedFor). hub is the
// syncer's cache of the hub, which holds only what is given to the target; live reads the
// hub's API server, and confirms a release the cache shows, as the cache may not yet hold the
// hub PV the upsync just made. It is false for any object but such a PV.
func originReleased(ctx context.Context, t transform.Target, hub, live client.Reader, pv metav1.Object) (bool, error) {
	hubPV, hubClaim, ok := t.Origin(pv)
	if !ok {
		return false, nil
	}
	for _, r := range []client.Reader{hub, live} {
		if obj, err := given(ctx, t, r, transform.PVGVK, hubPV); err != nil || obj != nil {
			return false, err
		}
		if hubClaim.Name == "" {
			continue
		}
		if claim, err := given(ctx, t, r, transform.PVCGVK, hubClaim); err != nil || claim != nil && transform.UpsyncedFor(hubPV.Name, claim) {
			return false, err
		}
	}
	return true, nil
}

// given returns the object of the kind called key when the reader holds it Sync or Upsync
// for the target; nil otherwise.
func given(ctx context.Context, t transform.Target, r client.Reader, gvk schema.GroupVersionKind, key types.NamespacedName) (metav1.Object, error) {
	obj := transform.Empty(gvk)
	if err := r.Get(ctx, key, obj); syncio.Absent(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if state, _ := t.State(obj); state != workloadv1alpha1.ResourceStateSync && state != workloadv1alpha1.ResourceStateUpsync {
		return nil, nil
	}
	return obj, nil
}

// holdsContents tells, for a namespace, whether hub objects in it are still synced to the
// target: the downstream namespace goes last, so that deleting it does not take them along.
func (r *Reconciler) holdsContents(ctx context.Context, hubNamespace string) (bool, error) {
	if r.GVK != transform.NamespaceGVK {
		return false, nil
	}
	for _, gvk := range r.Contents {
		list := transform.EmptyList(gvk)
		if err := r.Hub.List(ctx, list, client.InNamespace(hubNamespace), client.Limit(1)); err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			ctrl.LoggerFrom(ctx).V(1).Info("Downstream namespace kept for the objects synced into it", "kind", gvk.Kind)
			return true, nil
		}
	}
	return false, r.noClaimLive(ctx, hubNamespace)
}

// noClaimLive confirms at the hub's API server that no claim in the namespace is Sync or
// Upsync for the target before the namespace goes: coordination may have given the target a
// claim just as the namespace left it, which the cache does not show yet, and the namespace's
// release takes the syncer's grant there, after which it could never let the claim go. A
// claim found is an error, so that the removal is tried again. A namespace whose reads were
// not granted holds nothing for the target.
func (r *Reconciler) noClaimLive(ctx context.Context, hubNamespace string) error {
	if !slices.Contains(r.Contents, transform.PVCGVK) {
		return nil
	}
	given, err := r.Target.Given()
	if err != nil {
		return err
	}
	list := transform.EmptyList(transform.PVCGVK)
	err = r.HubReader.List(ctx, list, client.InNamespace(hubNamespace), client.MatchingLabelsSelector{Selector: given}, client.Limit(1))
	switch {
	case apierrors.IsForbidden(err):
		return nil
	case err != nil:
		return err
	case len(list.Items) > 0:
		return fmt.Errorf("claim %s/%s is the target's, though the cache does not show it yet: the namespace stays", hubNamespace, list.Items[0].GetName())
	}
	return nil
}

// deleteDownstream deletes a downstream object, once, if the hub is still the one the syncer
// started with; its deletion event brings the hub object back to the reconciler when it is
// gone. A claim's PV first takes the release policy, so that deleting the claim releases the
// storage only when coordination said so.
func (r *Reconciler) deleteDownstream(ctx context.Context, down *unstructured.Unstructured, release corev1.PersistentVolumeReclaimPolicy) error {
	if down.GetDeletionTimestamp() != nil {
		return nil
	}
	if err := r.SameHub.Confirm(ctx); err != nil {
		return err
	}
	switch down.GroupVersionKind().GroupKind() {
	case transform.PVCKind:
		if settled, err := r.settleVolume(ctx, down, release); err != nil || !settled {
			return err
		}
	case transform.PVKind:
		// A PV that took the policy Delete is the member's provisioner's to delete, once it
		// released the storage; deleting it first would keep the storage forever.
		if policy, _, _ := unstructured.NestedString(down.Object, "spec", "persistentVolumeReclaimPolicy"); policy == string(corev1.PersistentVolumeReclaimDelete) {
			ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the member to release the volume", "downstream", down.GetName())
			return nil
		}
	}
	// Deleted as read: a PV the cache showed Retain may have just taken Delete.
	uid, version := down.GetUID(), down.GetResourceVersion()
	DownstreamWrites.WithLabelValues(r.Target.Key, down.GetKind(), "delete").Inc()
	if err := r.Member.Delete(ctx, down, client.Preconditions{UID: &uid, ResourceVersion: &version}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting downstream %s: %w", client.ObjectKeyFromObject(down), err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted downstream object", "downstream", client.ObjectKeyFromObject(down))
	return nil
}

// release tells the hub that the object left the target: it removes the syncer's finalizer,
// the state label (the acknowledgement coordination waits for) and the deletion request.
func (r *Reconciler) release(ctx context.Context, up *unstructured.Unstructured) error {
	orig := up.DeepCopy()
	controllerutil.RemoveFinalizer(up, r.Target.Finalizer())
	workloadv1alpha1.Release(up, r.Target.Key)
	if err := r.Hub.Patch(ctx, up, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Removed from the target", "hubObject", client.ObjectKeyFromObject(up))
	return nil
}

// settleVolume gives the member's PV bound to a claim about to be deleted the release policy,
// and tells whether the claim may go. A claim that is to release its storage and names a
// volume waits until that PV exists and was bound: a claim that came to the target just
// before its deletion may still wait for the PV the syncer makes, and deleted first, it
// would release nothing while the hub counts the storage released. The binding shows in
// the claim, and brings it back here.
func (r *Reconciler) settleVolume(ctx context.Context, claim *unstructured.Unstructured, release corev1.PersistentVolumeReclaimPolicy) (bool, error) {
	pv, err := r.volumeOf(ctx, claim)
	if err != nil {
		return false, err
	}
	if named, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName"); release == corev1.PersistentVolumeReclaimDelete && named != "" &&
		(pv == nil || pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID == "") {
		ctrl.LoggerFrom(ctx).V(1).Info("Waiting for the claim's volume to be bound before the claim releases it", "pv", named)
		return false, nil
	}
	if pv == nil {
		return true, nil
	}
	return true, r.settle(ctx, pv, release)
}

// volumeOf returns the member's PV of a claim: the one the claim names, or, before the
// member's binder completed the binding, the one the provisioner bound to the claim; nil
// when there is none.
func (r *Reconciler) volumeOf(ctx context.Context, claim *unstructured.Unstructured) (*corev1.PersistentVolume, error) {
	if name, _, _ := unstructured.NestedString(claim.Object, "spec", "volumeName"); name != "" {
		return r.memberPV(ctx, name)
	}
	// Every PV of the member, read packed, in place.
	pvs := packedcache.NewList(transform.PVGVK)
	if err := r.Member.List(ctx, pvs, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	for i := range pvs.Items {
		if uid, _ := pvs.Items[i].NestedString("spec", "claimRef", "uid"); uid != "" && uid == string(claim.GetUID()) {
			pv, err := pvs.Items[i].Unpack()
			if err != nil {
				return nil, err
			}
			return typedPV(pv)
		}
	}
	return nil, nil
}

// memberPV reads a member PV from the cache, nil when there is none. The cache holds PVs
// unstructured only: reading them typed would cache every PV of the member a second time.
func (r *Reconciler) memberPV(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	obj, err := syncio.Read(ctx, r.Member, nil, transform.PVGVK, client.ObjectKey{Name: name})
	if err != nil || obj == nil {
		return nil, err
	}
	return typedPV(obj)
}

func typedPV(obj *unstructured.Unstructured) (*corev1.PersistentVolume, error) {
	pv := &corev1.PersistentVolume{}
	return pv, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pv)
}

// retainOrigin gives a PV the member provisioned, whose volume the hub gave away, the policy
// Retain, unless the syncer gave it Delete to release the storage; it tells whether the PV
// is Retain already. Its class's Delete would otherwise release the storage once its claim
// goes, as when the member made the claim itself.
func (r *Reconciler) retainOrigin(ctx context.Context, name string) (bool, error) {
	pv, err := r.memberPV(ctx, name)
	if err != nil || pv == nil {
		return false, err
	}
	switch {
	case pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain:
		return true, nil
	case pv.Annotations[storagev1alpha1.ReleasePolicyAnnotation] == string(corev1.PersistentVolumeReclaimDelete):
		return false, nil // released: the member's provisioner deletes it
	}
	// The PV's update brings it back here, Retain.
	return false, r.settle(ctx, pv, corev1.PersistentVolumeReclaimRetain)
}

// settle gives a member PV the release policy, and the annotation that keeps it there.
func (r *Reconciler) settle(ctx context.Context, pv *corev1.PersistentVolume, release corev1.PersistentVolumeReclaimPolicy) error {
	// A copy without the annotation is applied Retain (transform.CopyReclaimPolicy): one
	// that is Retain already needs nothing to stay so.
	kept := pv.Annotations[storagev1alpha1.ReleasePolicyAnnotation]
	if pv.Spec.PersistentVolumeReclaimPolicy == release && (kept == string(release) || kept == "" && release == corev1.PersistentVolumeReclaimRetain) {
		return nil
	}
	orig := pv.DeepCopy()
	pv.Spec.PersistentVolumeReclaimPolicy = release
	// The annotation keeps the policy when the PV's own sync applies the hub PV again.
	metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(release))
	DownstreamWrites.WithLabelValues(r.Target.Key, "PersistentVolume", "patch").Inc()
	if err := r.Member.Patch(ctx, pv, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("setting reclaim policy %s on downstream PV %s: %w", release, pv.Name, err)
	}
	ctrl.LoggerFrom(ctx).Info("Set the reclaim policy of a volume before letting it go", "pv", pv.Name, "reclaimPolicy", release)
	return nil
}
