package downsync

import (
	"context"
	"errors"
	"fmt"
	"slices"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// sync runs the phases of a hub object that is synced to the target.
func (r *Reconciler) sync(ctx context.Context, up, down *unstructured.Unstructured) error {
	if up.GetNamespace() != "" {
		if err := r.ensureNamespace(ctx, up.GetNamespace()); err != nil {
			return err
		}
	}
	if down == nil {
		if gone, err := r.claimGone(ctx, up); err != nil || gone {
			return err
		}
	}
	if err := r.keepReplica(ctx, up, down); err != nil {
		return err
	}
	down, err := r.ensureDownstream(ctx, up, down)
	if err != nil || down == nil {
		return err
	}
	if err := r.ensureFinalizer(ctx, up); err != nil {
		return err
	}
	return r.ensureStatus(ctx, up, down)
}

// keepReplica takes the VolumeSnapshot that a claim is restored from on this target away
// from VolSync, which deletes a destination's older images once a newer one is ready: it is
// labelled for VolSync to leave it alone, before the claim's copy is made from it, and owned
// by that copy once it exists, so that it goes with it. A replica of another namespace is
// imported instead (importReplica). A replica missing in the member is an error, retried,
// rather than a claim that waits for it unsaid.
func (r *Reconciler) keepReplica(ctx context.Context, up, down *unstructured.Unstructured) error {
	if r.GVK.GroupKind() != transform.PVCKind {
		return nil
	}
	key, imported := r.Target.ReplicaOf(up)
	switch {
	case key.Name == "":
		return nil
	case imported:
		return r.importReplica(ctx, up, down, key)
	}
	snap, err := r.replica(ctx, up, key)
	if err != nil {
		return err
	}
	patch := client.MergeFromWithOptions(snap.DeepCopy(), client.MergeFromWithOptimisticLock{})
	_, kept := snap.Labels[transform.KeepLabel]
	metav1.SetMetaDataLabel(&snap.ObjectMeta, transform.KeepLabel, "true")
	owned := down == nil
	if !owned {
		owned = slices.ContainsFunc(snap.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == down.GetUID() })
		if !owned {
			snap.OwnerReferences = append(snap.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Name: down.GetName(), UID: down.GetUID()})
		}
	}
	if kept && owned {
		return nil
	}
	DownstreamWrites.WithLabelValues(r.Target.Key, "VolumeSnapshot", "patch").Inc()
	return r.Member.Patch(ctx, snap, patch)
}

// replica reads the replica the hub claim up is restored from, at key in the member; one that
// is missing there is told in an event on up, and an error.
func (r *Reconciler) replica(ctx context.Context, up *unstructured.Unstructured, key client.ObjectKey) (*snapshotv1.VolumeSnapshot, error) {
	snap := &snapshotv1.VolumeSnapshot{}
	err := r.MemberReader.Get(ctx, key, snap)
	if apierrors.IsNotFound(err) {
		name := r.Target.Replica(up)
		r.Recorder.Eventf(up, nil, corev1.EventTypeWarning, storagev1alpha1.ReasonReplicaMissing, "Restore",
			"replica %s, which the claim is restored from, is not in %s: it was deleted there; the claim's copy is made once it is back", name, r.Target.Key)
		return nil, fmt.Errorf("replica %s, which the claim is restored from, is not in the member", name)
	}
	return snap, err
}

// claimGone tells whether up is a hub PV whose claim is being deleted: the member's PV,
// missing, went with the claim, its storage perhaps released, and is not made again, whether
// the member provisioned it or the syncer made it. Only a copy of the claim that still waits
// here for the PV the syncer makes, pre-bound to it, gets it: the claim came to the target
// just before its deletion, and releases its storage through that PV. The PV the member
// provisioned is not made again either once its claim is gone or is another claim of the
// same name.
func (r *Reconciler) claimGone(ctx context.Context, up *unstructured.Unstructured) (bool, error) {
	key, bound := transform.ClaimOf(up)
	if r.GVK.GroupKind() != transform.PVKind || !bound {
		return false, nil
	}
	// A claim the target holds is in the cache. One that is not is read from the hub: it
	// may come to the target next (a move syncs the PV first), or have left it after its
	// deletion, its PV's storage released.
	origin := up.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)] != ""
	claim, err := syncio.Read(ctx, r.Hub, r.HubReader, transform.PVCGVK, key)
	if err != nil {
		return false, err
	}
	gone := claim != nil && claim.GetDeletionTimestamp() != nil
	if uid, _, _ := unstructured.NestedString(up.Object, "spec", "claimRef", "uid"); !gone && origin && uid != "" {
		gone = claim == nil || string(claim.GetUID()) != uid
	}
	if gone && !origin {
		waits, err := r.copyWaitsFor(ctx, claim, up)
		if err != nil || waits {
			return false, err
		}
	}
	if gone {
		ctrl.LoggerFrom(ctx).V(1).Info("Not making again the member's PV of a claim being deleted", "claim", key)
	}
	return gone, nil
}

// copyWaitsFor tells whether the member's copy of the claim, not being deleted, names the
// copy of the hub PV up. It is read from the member itself: a copy deleted, its PV gone
// with its storage, may still show in the cache.
func (r *Reconciler) copyWaitsFor(ctx context.Context, claim, up *unstructured.Unstructured) (bool, error) {
	key := client.ObjectKey{Namespace: r.Target.DownstreamNamespace(claim), Name: r.Target.DownstreamName(claim)}
	down, err := syncio.Read(ctx, r.MemberReader, nil, transform.PVCGVK, key)
	if err != nil || down == nil || down.GetDeletionTimestamp() != nil {
		return false, err
	}
	name, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	return name == r.Target.DownstreamName(up), nil
}

// ensureFinalizer puts the syncer's finalizer on the hub object once its downstream copy
// exists, so that the object stays until the copy is gone. Coordination reads the finalizer
// as the copy's existence: it releases a claim's storage through the owner's copies only
// then, and an owner that could not make them (its namespace still terminating) lets the
// claim go without releasing what it never held. A copy made just before a crash, its
// finalizer not yet on, is found from the member and removed as an orphan if its hub object
// goes. A cache that still holds the version the syncer's patch replaced has not seen the
// finalizer yet, which is on: patched again, that version would only be refused as a
// conflict.
func (r *Reconciler) ensureFinalizer(ctx context.Context, up *unstructured.Unstructured) error {
	key := client.ObjectKeyFromObject(up)
	if r.finalized.Behind(key, key, up.GetResourceVersion()) || controllerutil.ContainsFinalizer(up, r.Target.Finalizer()) {
		return nil
	}
	orig := up.DeepCopy()
	controllerutil.AddFinalizer(up, r.Target.Finalizer())
	if err := r.Hub.Patch(ctx, up, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})); err != nil {
		return err
	}
	r.finalized.Wrote(key, key, orig.GetResourceVersion(), up.GetResourceVersion())
	return nil
}

// ensureNamespace creates the downstream namespace for a hub namespace when it is missing.
func (r *Reconciler) ensureNamespace(ctx context.Context, hubNamespace string) error {
	created, err := syncio.EnsureNamespace(ctx, r.Clients, r.Target, hubNamespace)
	if created {
		DownstreamWrites.WithLabelValues(r.Target.Key, transform.NamespaceKind.Kind, "apply").Inc()
	}
	return err
}

// ensureDownstream applies the downstream copy of the hub object unless it is up to date,
// and returns it. A downstream object the syncer did not create is left alone, except the
// PV the member provisioned for a claim, which the hub PV names as the same volume.
func (r *Reconciler) ensureDownstream(ctx context.Context, up, down *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	log := ctrl.LoggerFrom(ctx)
	down, err := r.confirmed(ctx, up, down)
	if err != nil {
		return nil, err
	}
	if down != nil && !r.Target.Owns(down) && !r.provisionedFor(up, down) {
		r.Recorder.Eventf(up, nil, corev1.EventTypeWarning, workloadv1alpha1.ReasonDownstreamConflict, "Sync",
			"%s has a %s %s that Custody did not create: it is left alone, and this object is not synced there", r.Target.Key, down.GetKind(), client.ObjectKeyFromObject(down))
		if r.GVK.GroupKind() == transform.PVCKind {
			// A claim the member made itself: the downsync maps only its own copies to hub
			// objects, so the claim is retried until the upsync adopted it or it is gone.
			return nil, fmt.Errorf("downstream claim %s exists and was not created by the syncer; it is left alone until adopted or deleted", client.ObjectKeyFromObject(down))
		}
		log.Info("Leaving alone a downstream object the syncer did not create", "downstream", client.ObjectKeyFromObject(down))
		return nil, nil
	}
	in, err := r.inputs(ctx, up, down)
	if err != nil {
		return nil, err
	}
	desired, err := r.Target.Downstream(up, in)
	if err != nil {
		return nil, err
	}
	if down != nil {
		if transform.UpToDate(down, desired) {
			return down, nil
		}
		// An apply makes the object when it is missing, whatever resourceVersion it names;
		// naming the uid makes it fail instead. The cache may show an object that is gone
		// already: a PV that went with its claim, its storage released, must not come back.
		desired.SetResourceVersion(down.GetResourceVersion())
		desired.SetUID(down.GetUID())
	}
	if err := r.apply(ctx, desired); err != nil {
		return nil, err
	}
	if down == nil {
		log.Info("Created downstream object", "downstream", client.ObjectKeyFromObject(desired))
	} else {
		log.Info("Updated downstream object", "downstream", client.ObjectKeyFromObject(desired))
	}
	return desired, nil
}

// provisionedFor tells whether down is the PV the member provisioned for the hub PV up: the
// one its upsync recorded for this target.
func (r *Reconciler) provisionedFor(up, down *unstructured.Unstructured) bool {
	return r.GVK.GroupKind() == transform.PVKind && up.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)] == down.GetName()
}

// inputs gathers what the downstream copy depends on besides the hub object: the downstream
// name of a PVC's volume, and the target's placement for pod templates.
func (r *Reconciler) inputs(ctx context.Context, up, down *unstructured.Unstructured) (transform.Inputs, error) {
	in := transform.Inputs{Current: down}
	gk := r.GVK.GroupKind()
	if gk == transform.PVCKind {
		if name, _, _ := unstructured.NestedString(up.Object, "spec", "volumeName"); name != "" {
			// The claim may reach the cache before its PV, which is read from the hub then:
			// the PV's annotations name the member's own PV of a volume it provisioned, and a
			// claim bound to any other name could never be bound to that one. Without the PV
			// the claim waits.
			pv, err := syncio.Read(ctx, r.Hub, r.HubReader, transform.PVGVK, client.ObjectKey{Name: name})
			if err != nil {
				return in, err
			}
			switch {
			case r.Target.Restores(up) && (pv == nil || pv.GetDeletionTimestamp() != nil):
				// The claim is restored here from a replica: the member provisions its volume,
				// which comes up under the name of the hub PV set aside.
			case pv == nil:
				return in, fmt.Errorf("the claim's hub PV %s does not exist yet", name)
			default:
				in.VolumeName = r.Target.PVName(name, pv.GetAnnotations())
				if err := r.volumeCopied(ctx, up, down, in.VolumeName); err != nil {
					return in, err
				}
			}
		}
	}
	if gk == transform.PVKind && down != nil {
		unbind, err := r.unbinds(ctx, up, down)
		if err != nil {
			return in, err
		}
		in.Unbind = unbind
	}
	if transform.HasPodTemplate(gk) {
		st := &workloadv1alpha1.SyncTarget{}
		if err := r.Hub.Get(ctx, client.ObjectKey{Name: r.SyncTargetName}, st); client.IgnoreNotFound(err) != nil {
			return in, err
		}
		in.NodeSelector, in.Tolerations = st.Spec.NodeSelector, st.Spec.Tolerations
	}
	return in, nil
}

// unbinds tells whether the member's PV down is to be bound again, to the next copy of its
// hub claim (see transform.Unbinds). The claim is read only for a PV that is Released, from
// the hub itself when the cache does not hold it: it may be on its way back to the target.
func (r *Reconciler) unbinds(ctx context.Context, up, down *unstructured.Unstructured) (bool, error) {
	key, bound := transform.ClaimOf(up)
	if phase, _, _ := unstructured.NestedString(down.Object, "status", "phase"); !bound || phase != string(corev1.VolumeReleased) {
		return false, nil
	}
	claim, err := syncio.Read(ctx, r.Hub, r.HubReader, transform.PVCGVK, key)
	if err != nil {
		return false, err
	}
	unbind := transform.Unbinds(down, up, claim)
	if unbind {
		ctrl.LoggerFrom(ctx).Info("Clearing the member PV's binding to a gone copy of its claim, for the claim's next copy to bind it", "pv", down.GetName(), "claim", key)
	}
	return unbind, nil
}

// errVolumeNotCopied: the claim's copy waits for the member's PV it names.
var errVolumeNotCopied = errors.New("waiting for the member's copy of the claim's PV")

// volumeCopied fails with errVolumeNotCopied while the claim up has no copy yet and the
// member has no PV called name. The member's binder binds a claim that names its PV as the
// claim comes, if the PV is there; a claim that comes first waits for the binder's periodic
// sync (15 s by default). The PV's copy wakes the claim (see claimOfCopy). A claim being
// deleted does not wait: its PV's copy waits for the claim's (see claimGone).
func (r *Reconciler) volumeCopied(ctx context.Context, up, down *unstructured.Unstructured, name string) error {
	if down != nil || up.GetDeletionTimestamp() != nil {
		return nil
	}
	pv, err := syncio.Read(ctx, r.Member, nil, transform.PVGVK, client.ObjectKey{Name: name})
	if err != nil {
		return err
	}
	if pv == nil {
		return fmt.Errorf("%w %s", errVolumeNotCopied, name)
	}
	return nil
}

// ensureStatus copies the downstream status to the hub object's status subresource, when
// this target is the one that reports it. A namespace's status is its own cluster's, and a
// synced PV's status belongs to the hub, where several members may share it.
func (r *Reconciler) ensureStatus(ctx context.Context, up, down *unstructured.Unstructured) error {
	if gk := r.GVK.GroupKind(); gk == transform.NamespaceKind || gk == transform.PVKind || !r.Target.ReportsStatus(up) {
		return nil
	}
	downStatus, found := down.Object["status"]
	if !found || transform.SameStatus(up.Object["status"], downStatus) || r.binding(up, down) || unjudged(up, downStatus) {
		return nil
	}
	report := transform.Empty(r.GVK)
	report.SetNamespace(up.GetNamespace())
	report.SetName(up.GetName())
	report.Object["status"] = downStatus
	return status.Apply(ctx, r.Hub, report, transform.FieldManager)
}

// binding: a claim's copy is Pending while the hub claim is Bound already, as the copy is
// until its member binds it when it was made for a volume that exists (pre-bound: a moved
// claim), or provisions it from the replica the claim is restored from: the hub claim stays
// Bound. Its record (the VolumeOwnership) tells where the move or the restore is.
func (r *Reconciler) binding(up, down *unstructured.Unstructured) bool {
	if up.GroupVersionKind().GroupKind() != transform.PVCGVK.GroupKind() {
		return false
	}
	phase := func(o *unstructured.Unstructured) string {
		p, _, _ := unstructured.NestedString(o.Object, "status", "phase")
		return p
	}
	volume := func(o *unstructured.Unstructured) string {
		v, _, _ := unstructured.NestedString(o.Object, "spec", "volumeName")
		return v
	}
	return phase(down) == string(corev1.ClaimPending) && phase(up) == string(corev1.ClaimBound) && volume(up) != "" &&
		(volume(down) != "" || r.Target.Restores(up))
}

// unjudged: a claim's copy has no Unused condition yet, while the hub claim has the one its
// last reporter's member gave it, and the statuses are the same but for that condition. A
// member's kube-controller-manager puts the condition on every claim once it looked for pods
// that use it (True or False), and never takes it off: the copy, made a moment ago, is not
// judged yet. Reported now, its status would take the condition off the hub claim, and the
// next report would put it back. A member whose kube-controller-manager does not set the
// condition (older than 1.37, or the feature off) leaves the last one's on the hub claim
// until anything else of its status changes.
func unjudged(up *unstructured.Unstructured, downStatus any) bool {
	if up.GroupVersionKind().GroupKind() != transform.PVCGVK.GroupKind() {
		return false
	}
	unused := string(corev1.PersistentVolumeClaimUnused)
	hubRest, hubHas := transform.WithoutCondition(up.Object["status"], unused)
	_, memberHas := transform.WithoutCondition(downStatus, unused)
	return hubHas && !memberHas && transform.SameStatus(hubRest, downStatus)
}

// apply writes a desired downstream object with server-side apply.
func (r *Reconciler) apply(ctx context.Context, desired *unstructured.Unstructured) error {
	DownstreamWrites.WithLabelValues(r.Target.Key, desired.GetKind(), "apply").Inc()
	return r.Member.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(transform.FieldManager), client.ForceOwnership)
}
