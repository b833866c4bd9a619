package upsync

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/protection"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// provisioned returns the hub claim and the member PV to upsync for it: the hub claim is
// synced to the target, its downstream copy is Bound and not being deleted, and the PV it is
// bound to was not made by the syncer and is Bound. For a hub claim upsynced from a claim
// the member made itself (labelled Upsync), that claim stands for the downstream copy;
// copied tells that the syncer made the copy. Both objects are nil when there is nothing to
// upsync.
func (r *Reconciler) provisioned(ctx context.Context, key types.NamespacedName) (claim *unstructured.Unstructured, pv *corev1.PersistentVolume, copied bool, err error) {
	claim = transform.Empty(transform.PVCGVK)
	if err := r.Hub.Get(ctx, key, claim); err != nil {
		return nil, nil, false, client.IgnoreNotFound(err)
	}
	state, _ := r.Target.State(claim)
	if state != workloadv1alpha1.ResourceStateSync && state != workloadv1alpha1.ResourceStateUpsync {
		return nil, nil, false, nil
	}
	down, err := r.memberClaim(ctx, key)
	if err != nil || down == nil {
		return nil, nil, false, err
	}
	copied = r.Target.Owns(down)
	phase, _, _ := unstructured.NestedString(down.Object, "status", "phase")
	volumeName, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	// A claim being deleted in the member takes its volume along, or leaves it Retain there,
	// as the syncer settled it: a hub record of it would hand the volume on.
	if (!copied && state == workloadv1alpha1.ResourceStateSync) || phase != string(corev1.ClaimBound) || volumeName == "" || down.GetDeletionTimestamp() != nil {
		return nil, nil, false, nil
	}
	memberPV := transform.Empty(transform.PVGVK)
	if err := r.Member.Get(ctx, client.ObjectKey{Name: volumeName}, memberPV); err != nil {
		return nil, nil, false, client.IgnoreNotFound(err)
	}
	if r.Target.Owns(memberPV) {
		return nil, nil, false, nil
	}
	pv = &corev1.PersistentVolume{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(memberPV.Object, pv); err != nil {
		return nil, nil, false, err
	}
	// A PV Released already lost its claim, and its class's policy may be releasing it.
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != down.GetUID() || pv.Status.Phase != corev1.VolumeBound {
		return nil, nil, false, nil
	}
	return claim, pv, copied, nil
}

// markOrigin marks the member PV as upsynced as the hub PV hubName for the hub claim, before
// the hub PV is made: whatever becomes of either, the syncer can then tell the member PV for
// its own, and remove it when the hub gives neither to the target. A PV provisioned for the
// syncer's copy becomes Retain in the same write (transform.KeepProvisioned): the patch is
// made against the PV read Bound, so that a PV whose claim went since is not kept, nor
// recorded. A PV bound to a claim the member made itself stays as the member made it.
func (r *Reconciler) markOrigin(ctx context.Context, pv *corev1.PersistentVolume, hubName string, claim types.NamespacedName, copied bool) error {
	orig := pv.DeepCopy()
	kept := copied && transform.KeepProvisioned(pv)
	if !kept && r.Target.MarkedOrigin(pv, hubName, claim) {
		return nil
	}
	r.Target.MarkOrigin(pv, hubName, claim)
	if err := r.Member.Patch(ctx, pv, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("marking member PV %s as upsynced: %w", pv.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("Marked the member's PV as upsynced", "memberPV", pv.Name, "hubPV", hubName, "reclaimPolicy", pv.Spec.PersistentVolumeReclaimPolicy)
	return nil
}

// ensureHubPV creates the hub PV, or keeps it in line with the member's while it is labelled
// Upsync for the target. Labels and annotations others put on it stay, and so do its binding,
// which is coordination's, and its reclaim policy, which is the hub's: a user may keep the
// volume before coordination took it up, and a policy changed in the member does not reach
// the hub.
func (r *Reconciler) ensureHubPV(ctx context.Context, req types.NamespacedName, want *corev1.PersistentVolume) error {
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
		return r.ensureHubStatus(ctx, req, created, want.Status)
	}
	if state, _ := r.Target.State(cur); state != workloadv1alpha1.ResourceStateUpsync {
		log.V(1).Info("Hub PV no longer upsynced from the target", "state", state)
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = merged(next.Labels, want.Labels)
	next.Annotations = merged(next.Annotations, want.Annotations)
	next.Spec = want.Spec
	next.Spec.ClaimRef, next.Spec.PersistentVolumeReclaimPolicy = cur.Spec.ClaimRef, cur.Spec.PersistentVolumeReclaimPolicy
	if !equality.Semantic.DeepEqual(cur.ObjectMeta, next.ObjectMeta) || !equality.Semantic.DeepEqual(cur.Spec, next.Spec) {
		// A patch of what changed: the cached PV lacks what the syncer's caches leave out,
		// which an update would remove.
		if err := r.Hub.Patch(ctx, next, client.MergeFromWithOptions(cur, client.MergeFromWithOptimisticLock{})); err != nil {
			return err
		}
		log.Info("Updated upsynced volume")
	}
	return r.ensureHubStatus(ctx, req, next, want.Status)
}

// ensureHubStatus sets the hub PV's status to the member PV's, for the hub claim req. A hub
// PV the cache holds at the version the last apply replaced (the one just made, say) has
// that status already: the apply's event brings the claim back.
func (r *Reconciler) ensureHubStatus(ctx context.Context, req types.NamespacedName, pv *corev1.PersistentVolume, want corev1.PersistentVolumeStatus) error {
	key := types.NamespacedName{Name: pv.Name}
	if r.reported.Behind(req, key, pv.ResourceVersion) || equality.Semantic.DeepEqual(pv.Status, want) {
		return nil
	}
	applied := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv.Name}, Status: want}
	if err := status.Apply(ctx, r.Hub, applied, transform.FieldManager); err != nil {
		return err
	}
	r.reported.Wrote(req, key, pv.ResourceVersion, applied.ResourceVersion)
	return nil
}

// hubPV reads a hub PV from the cache, else directly, as one not labelled for the target is
// not cached; nil when it does not exist.
func (r *Reconciler) hubPV(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	obj, err := syncio.Read(ctx, r.Hub, r.HubReader, transform.PVGVK, client.ObjectKey{Name: name})
	if err != nil || obj == nil {
		return nil, err
	}
	pv := &corev1.PersistentVolume{}
	return pv, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pv)
}

// pruneUpsynced deletes the hub PVs upsynced for the hub claim key while their member PV no
// longer exists and no removal was asked for: in the Upsync state the member is the source,
// and a hub record of a PV it no longer has would hand a dead volume to the next target.
func (r *Reconciler) pruneUpsynced(ctx context.Context, key types.NamespacedName) error {
	hubPVs := transform.EmptyList(transform.PVGVK)
	if err := r.Hub.List(ctx, hubPVs, client.MatchingFields{syncio.ClaimIndex: key.String()},
		client.MatchingLabels{r.Target.StateLabel(): string(workloadv1alpha1.ResourceStateUpsync)}); err != nil {
		return err
	}
	for i := range hubPVs.Items {
		hubPV := &hubPVs.Items[i]
		memberName := hubPV.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)]
		// One that coordination asks to leave the target is the downsync's to let go: the
		// hub PV may have to stay as the record of storage kept.
		if memberName == "" || r.Target.LeaveRequested(hubPV) {
			continue
		}
		if memberPV, err := syncio.Read(ctx, r.Member, r.MemberReader, transform.PVGVK, client.ObjectKey{Name: memberName}); err != nil {
			return err
		} else if memberPV != nil {
			continue
		}
		// The record is the syncer's: it lets go of the protection finalizer too.
		if err := protection.Delete(ctx, r.Hub, hubPV); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Removed an upsynced volume whose member PV is gone", "hubPV", hubPV.GetName(), "memberPV", memberName)
	}
	return nil
}

// adopt takes up a claim the member made itself, in one of the syncer's namespaces, under the
// name of hub claim key: a member's StatefulSet controller that made a pod's claim before the
// hub's reached the member, or an operator in the member. Without a hub claim, it upsyncs
// one, labelled Upsync, from which coordination takes the member's volume up as it does a
// provisioned one. Once the hub claim is Sync for the target, it marks the member's claim as
// the syncer's, so that the downsync keeps it and the upsync records its volume, unless the
// hub claim's volume is another one: then the member's claim stays as it is, with its volume,
// and an event on the hub claim says why.
func (r *Reconciler) adopt(ctx context.Context, key types.NamespacedName) error {
	cached, err := syncio.Read(ctx, r.Hub, nil, transform.PVCGVK, key)
	if err != nil {
		return err
	}
	if cached != nil && cached.GetDeletionTimestamp() != nil {
		if state, _ := r.Target.State(cached); state == workloadv1alpha1.ResourceStateUpsync {
			// Deleted before coordination took it up: the member's claim stays the member's.
			return r.release(ctx, cached)
		}
	}
	down, err := r.memberClaim(ctx, key)
	if err != nil || !r.memberMade(down) {
		return err
	}
	// Only for a claim the member made itself is the hub claim read past the cache, which
	// holds only the claims given to the target.
	up := cached
	if up == nil {
		if up, err = syncio.Read(ctx, r.HubReader, nil, transform.PVCGVK, key); err != nil {
			return err
		}
	}
	state, placed := workloadv1alpha1.ResourceState(""), false
	if up != nil {
		state, placed = r.Target.State(up)
	}
	switch {
	case up == nil:
		// A hub claim is made for it only as the member itself holds it: the cache may still
		// show a claim deleted there a moment ago.
		if down, err = r.memberClaimLive(ctx, key); err != nil || !r.memberMade(down) {
			return err
		}
		return r.upsyncClaim(ctx, key, down)
	case !placed:
		r.refuse(up, down, "the hub claim is not on this target")
		return nil
	case state != workloadv1alpha1.ResourceStateSync || r.Target.RemovalRequested(up):
		return nil // waiting for coordination, or leaving the target: nothing to adopt
	}
	return r.markOwned(ctx, up, down)
}

// upsyncClaim creates the hub claim for a claim the member made itself, when the hub
// namespace is synced to the target: its spec without the binding, its labels, and the
// state Upsync. Annotations stay in the member: its binder and controllers wrote them there.
func (r *Reconciler) upsyncClaim(ctx context.Context, key types.NamespacedName, down *unstructured.Unstructured) error {
	ns := transform.Empty(transform.NamespaceGVK)
	if err := r.HubReader.Get(ctx, client.ObjectKey{Name: key.Namespace}, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	if state, _ := r.Target.State(ns); state != workloadv1alpha1.ResourceStateSync || r.Target.RemovalRequested(ns) {
		return nil
	}
	member := &corev1.PersistentVolumeClaim{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(down.Object, member); err != nil {
		return err
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: maps.Clone(member.Labels)},
		Spec:       *member.Spec.DeepCopy(),
	}
	claim.Spec.VolumeName = ""
	maps.DeleteFunc(claim.Labels, func(k, _ string) bool { return workloadv1alpha1.IsProtocolKey(k) })
	workloadv1alpha1.SetState(claim, r.Target.Key, workloadv1alpha1.ResourceStateUpsync)
	if err := r.Hub.Create(ctx, claim); err != nil {
		// A claim made on the hub meanwhile is adopted on its next change.
		return client.IgnoreAlreadyExists(err)
	}
	ctrl.LoggerFrom(ctx).Info("Upsynced a claim the member made itself", "claim", key, "memberVolume", member.Spec.VolumeName)
	r.Recorder.Eventf(claim, nil, corev1.EventTypeNormal, storagev1alpha1.ReasonClaimAdopted, "Adopt",
		"%s made the claim itself; its volume %s is taken up as the claim's", r.Target.Key, member.Spec.VolumeName)
	return nil
}

// markOwned marks the member's claim as the syncer's copy of the hub claim up, when it is
// bound to the hub claim's volume or the hub claim has none yet.
func (r *Reconciler) markOwned(ctx context.Context, up, down *unstructured.Unstructured) error {
	want, _, _ := unstructured.NestedString(up.Object, "spec", "volumeName")
	have, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	if want != "" {
		pv, err := r.hubPV(ctx, want)
		if err != nil {
			return err
		}
		if pv == nil || r.Target.PVName(want, pv.Annotations) != have {
			r.refuse(up, down, "the claim's volume is "+want)
			return nil
		}
	}
	orig := down.DeepCopy()
	labels := down.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, r.Target.Markers())
	down.SetLabels(labels)
	annotations := down.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[transform.HubNamespaceAnnotation], annotations[transform.HubNameAnnotation] = up.GetNamespace(), up.GetName()
	down.SetAnnotations(annotations)
	if err := r.Member.Patch(ctx, down, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Adopted a claim the member made itself", "claim", client.ObjectKeyFromObject(up), "memberVolume", have)
	r.Recorder.Eventf(up, nil, corev1.EventTypeNormal, storagev1alpha1.ReasonClaimAdopted, "Adopt",
		"%s made the claim itself; the syncer keeps it as the claim's copy", r.Target.Key)
	return nil
}

// refuse says on the hub claim why the member's own claim of its name is not adopted.
func (r *Reconciler) refuse(up, down *unstructured.Unstructured, why string) {
	have, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	r.Recorder.Eventf(up, nil, corev1.EventTypeWarning, storagev1alpha1.ReasonClaimNotAdopted, "Adopt",
		"%s made a claim of this name itself, bound to volume %q, and it is not adopted: %s; it stays in the member with its volume until it is deleted there",
		r.Target.Key, have, why)
}

// release drops the target's state label from a hub claim upsynced from a member's claim and
// deleted before coordination took it up.
func (r *Reconciler) release(ctx context.Context, up *unstructured.Unstructured) error {
	orig := up.DeepCopy()
	workloadv1alpha1.Release(up, r.Target.Key)
	if err := r.Hub.Patch(ctx, up, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Let go of a deleted claim upsynced from the member's", "claim", client.ObjectKeyFromObject(up))
	return nil
}

// memberClaim reads the member's claim of the hub claim's name in the syncer's namespace from
// the cache, which holds every claim of the member; nil when there is none.
func (r *Reconciler) memberClaim(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, error) {
	return syncio.Read(ctx, r.Member, nil, transform.PVCGVK, r.memberKey(key))
}

// memberMade tells whether down is a claim the member made itself and keeps.
func (r *Reconciler) memberMade(down *unstructured.Unstructured) bool {
	return down != nil && !r.Target.Owns(down) && down.GetDeletionTimestamp() == nil
}

// memberClaimLive reads it from the member itself.
func (r *Reconciler) memberClaimLive(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, error) {
	return syncio.Read(ctx, r.MemberReader, nil, transform.PVCGVK, r.memberKey(key))
}

func (r *Reconciler) memberKey(key types.NamespacedName) types.NamespacedName {
	return types.NamespacedName{Namespace: r.Target.Namespace(key.Namespace), Name: key.Name}
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
