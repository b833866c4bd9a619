package downsync

import (
	"context"
	"fmt"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// importReplica brings the replica of another namespace that the hub claim up is restored
// from into the claim's namespace (see transform.Import): before the copy is made, it holds
// the replica from VolSync's rotation and makes the pre-provisioned content and snapshot the
// copy names; once the copy is bound, its volume restored, it lets go of them (releaseImport).
func (r *Reconciler) importReplica(ctx context.Context, up, down *unstructured.Unstructured, key types.NamespacedName) error {
	// A copy the cache does not show yet may be bound already, its import let go of.
	down, err := r.confirmed(ctx, up, down)
	if err != nil {
		return err
	}
	if down != nil {
		if phase, _, _ := unstructured.NestedString(down.Object, "status", "phase"); phase != string(corev1.ClaimBound) {
			return nil
		}
		return r.dropImport(ctx, up, down)
	}
	replica, err := r.replica(ctx, up, key)
	if err != nil {
		return err
	}
	if err := r.hold(ctx, replica, r.Target.ImportName(up.GetUID())); err != nil {
		return err
	}
	bound := ""
	if replica.Status != nil {
		bound = ptr.Deref(replica.Status.BoundVolumeSnapshotContentName, "")
	}
	if bound == "" {
		return fmt.Errorf("replica %s has no content yet: %w", key, transform.ErrReplicaNotCut)
	}
	origin := &snapshotv1.VolumeSnapshotContent{}
	if err := r.MemberReader.Get(ctx, client.ObjectKey{Name: bound}, origin); err != nil {
		return fmt.Errorf("reading the content of replica %s: %w", key, err)
	}
	content, snap, err := r.Target.Import(up, replica, origin)
	if err != nil {
		return fmt.Errorf("importing replica %s: %w", key, err)
	}
	for _, obj := range []client.Object{content, snap} {
		if err := r.createOnce(ctx, obj); err != nil {
			return err
		}
	}
	return nil
}

// hold holds the replica from VolSync's rotation for the import called name.
func (r *Reconciler) hold(ctx context.Context, replica *snapshotv1.VolumeSnapshot, name string) error {
	patch := client.MergeFromWithOptions(replica.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if !transform.Hold(replica, name) {
		return nil
	}
	DownstreamWrites.WithLabelValues(r.Target.Key, "VolumeSnapshot", "patch").Inc()
	ctrl.LoggerFrom(ctx).Info("Holding a replica of another namespace from VolSync's rotation", "replica", client.ObjectKeyFromObject(replica))
	return r.Member.Patch(ctx, replica, patch)
}

// createOnce creates obj in the member unless it exists.
func (r *Reconciler) createOnce(ctx context.Context, obj client.Object) error {
	kind := kindOf(obj)
	existing := obj.DeepCopyObject().(client.Object)
	if err := r.MemberReader.Get(ctx, client.ObjectKeyFromObject(obj), existing); err == nil || client.IgnoreNotFound(err) != nil {
		return err
	}
	DownstreamWrites.WithLabelValues(r.Target.Key, kind, "create").Inc()
	if err := r.Member.Create(ctx, obj); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("importing a replica: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("Imported a replica of another namespace", "downstream", client.ObjectKeyFromObject(obj), "kind", kind)
	return nil
}

// releaseImport lets go of the import a claim's copy was made from, at key (see
// transform.ImportOf): it gives the replica back (transform.GiveBack), then deletes the
// imported content, whose Retain keeps the storage snapshot, and the imported snapshot last,
// as its being there is what says that the release is not over. A snapshot at key that the
// syncer did not make (the replica itself, for a claim of the replica's own namespace) is
// left alone.
func (r *Reconciler) releaseImport(ctx context.Context, key types.NamespacedName) error {
	snap := &snapshotv1.VolumeSnapshot{}
	if err := r.MemberReader.Get(ctx, key, snap); err != nil || !r.Target.Owns(snap) {
		return client.IgnoreNotFound(err)
	}
	if replica, ok := transform.ImportedReplica(snap); ok {
		if err := r.giveBack(ctx, replica, key.Name); err != nil {
			return err
		}
	}
	content := &snapshotv1.VolumeSnapshotContent{}
	err := r.MemberReader.Get(ctx, client.ObjectKey{Name: key.Name}, content)
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	if err == nil && r.Target.Owns(content) {
		if err := r.deleteImported(ctx, content); err != nil {
			return err
		}
	}
	return r.deleteImported(ctx, snap)
}

// giveBack lets go of the replica at key for the import called name.
func (r *Reconciler) giveBack(ctx context.Context, key types.NamespacedName, name string) error {
	replica := &snapshotv1.VolumeSnapshot{}
	if err := r.MemberReader.Get(ctx, key, replica); err != nil {
		return client.IgnoreNotFound(err)
	}
	patch := client.MergeFromWithOptions(replica.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed, gone := transform.GiveBack(replica, name)
	log := ctrl.LoggerFrom(ctx).WithValues("replica", key)
	switch {
	case gone:
		log.Info("Deleting a replica VolSync gave up, as the restore that held it is over")
		return r.deleteImported(ctx, replica)
	case changed:
		DownstreamWrites.WithLabelValues(r.Target.Key, "VolumeSnapshot", "patch").Inc()
		log.Info("Gave a replica back to VolSync's rotation, as the restore that held it is over")
		return r.Member.Patch(ctx, replica, patch)
	}
	return nil
}

// deleteImported deletes a snapshot object of an import, once.
func (r *Reconciler) deleteImported(ctx context.Context, obj client.Object) error {
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	kind := kindOf(obj)
	DownstreamWrites.WithLabelValues(r.Target.Key, kind, "delete").Inc()
	if err := r.Member.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting %s %s: %w", kind, client.ObjectKeyFromObject(obj), err)
	}
	ctrl.LoggerFrom(ctx).Info("Deleted a replica's import", "downstream", client.ObjectKeyFromObject(obj), "kind", kind)
	return nil
}

// dropImport lets go of the import, if any, of a claim whose copy goes (up may be nil when
// the hub claim is gone): before the copy, which names it.
func (r *Reconciler) dropImport(ctx context.Context, up, down *unstructured.Unstructured) error {
	if r.GVK.GroupKind() != transform.PVCKind {
		return nil
	}
	key, ok := r.Target.ImportOf(up, down)
	if !ok {
		return nil
	}
	return r.releaseImport(ctx, key)
}

// kindOf is the kind of a snapshot object of an import, as the metrics count it.
func kindOf(obj client.Object) string {
	if _, ok := obj.(*snapshotv1.VolumeSnapshotContent); ok {
		return "VolumeSnapshotContent"
	}
	return "VolumeSnapshot"
}
