package simstorage

import (
	"context"
	"fmt"
	"strconv"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// contentFinalizer is the finalizer the snapshot controller keeps on a content whose deletion
// policy is Delete, until the snapshotter deleted its storage snapshot.
const contentFinalizer = "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection"

// bindRetry paces a pre-provisioned VolumeSnapshot waiting for its content, as the snapshot
// controller's resync does.
const bindRetry = time.Second

// snapshotReady plays the snapshot controller and the CSI snapshotter for a VolumeSnapshot
// of the member: one the player took (dynamic) gets a content of the snapshot its storage cut
// for it, and one that names a pre-provisioned content binds to it once that content names it
// back; either is ready once the storage has the snapshot of the content's handle.
func (m *volsyncMember) snapshotReady(ctx context.Context, key client.ObjectKey) (reconcile.Result, error) {
	snap := &snapshotv1.VolumeSnapshot{}
	if err := m.client.Get(ctx, key, snap); err != nil || snap.DeletionTimestamp != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if snap.Status != nil && ptr.Deref(snap.Status.ReadyToUse, false) {
		return reconcile.Result{}, nil
	}
	var content *snapshotv1.VolumeSnapshotContent
	var handle string
	var err error
	if name := snap.Spec.Source.VolumeSnapshotContentName; name != nil {
		if content, err = m.preProvisioned(ctx, snap, *name); err != nil || content == nil {
			return reconcile.Result{RequeueAfter: bindRetry}, err
		}
		handle = contentHandle(content)
	} else if content, handle, err = m.dynamic(ctx, snap); err != nil || content == nil {
		return reconcile.Result{}, err
	}
	st := m.storage(content.Spec.Driver)
	if st == nil {
		return reconcile.Result{}, nil
	}
	log, ok := st.ledger.snapshotLog(handle)
	patch := client.MergeFrom(snap.DeepCopy())
	if !ok {
		msg := fmt.Sprintf("snapshot %s does not exist on storage %s", handle, st.name)
		if err := m.reportContent(ctx, content, handle, nil, msg); err != nil {
			return reconcile.Result{}, err
		}
		snap.Status = &snapshotv1.VolumeSnapshotStatus{BoundVolumeSnapshotContentName: ptr.To(content.Name), ReadyToUse: ptr.To(false),
			Error: &snapshotv1.VolumeSnapshotError{Time: &metav1.Time{Time: time.Now()}, Message: &msg}}
		return reconcile.Result{RequeueAfter: bindRetry}, m.client.Status().Patch(ctx, snap, patch)
	}
	if err := m.reportContent(ctx, content, handle, log, ""); err != nil {
		return reconcile.Result{}, err
	}
	now := metav1.Now()
	snap.Status = &snapshotv1.VolumeSnapshotStatus{
		BoundVolumeSnapshotContentName: ptr.To(content.Name), CreationTime: &now, ReadyToUse: ptr.To(true), RestoreSize: restoreSize(log),
	}
	if err := m.client.Status().Patch(ctx, snap, patch); err != nil {
		return reconcile.Result{}, err
	}
	return reconcile.Result{}, rotate(ctx, m.client, snap)
}

// dynamic makes the content of a VolumeSnapshot the player took, as the snapshot controller
// does once the storage cut it: Delete, naming the volume it was cut from; handle is the
// storage snapshot's. It is nil for a VolumeSnapshot no storage of the member cut.
func (m *volsyncMember) dynamic(ctx context.Context, snap *snapshotv1.VolumeSnapshot) (content *snapshotv1.VolumeSnapshotContent, handle string, err error) {
	for _, st := range m.storages {
		handle, volume, ok := st.ledger.cutFor(snapshotKey(m.name, snap.Namespace, snap.Name))
		if !ok {
			continue
		}
		content = &snapshotv1.VolumeSnapshotContent{
			ObjectMeta: metav1.ObjectMeta{Name: "snapcontent-" + string(snap.UID), Finalizers: []string{contentFinalizer}},
			Spec: snapshotv1.VolumeSnapshotContentSpec{
				Driver: st.Provisioner(), DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
				Source:            snapshotv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To(volume)},
				VolumeSnapshotRef: corev1.ObjectReference{Namespace: snap.Namespace, Name: snap.Name, UID: snap.UID},
			},
		}
		if err := m.client.Create(ctx, content); client.IgnoreAlreadyExists(err) != nil {
			return nil, "", err
		}
		return content, handle, nil
	}
	return nil, "", nil
}

// preProvisioned is the content called name that snap names, once the content names snap
// back (its volumeSnapshotRef), as the snapshot controller binds a pre-provisioned snapshot;
// nil until then.
func (m *volsyncMember) preProvisioned(ctx context.Context, snap *snapshotv1.VolumeSnapshot, name string) (*snapshotv1.VolumeSnapshotContent, error) {
	content := &snapshotv1.VolumeSnapshotContent{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: name}, content); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if ref := content.Spec.VolumeSnapshotRef; ref.Namespace != snap.Namespace || ref.Name != snap.Name || content.DeletionTimestamp != nil {
		return nil, nil
	}
	if content.Spec.VolumeSnapshotRef.UID == "" {
		patch := client.MergeFrom(content.DeepCopy())
		content.Spec.VolumeSnapshotRef.UID = snap.UID
		if err := m.client.Patch(ctx, content, patch); err != nil {
			return nil, err
		}
	}
	return content, nil
}

// reportContent writes into the content's status what the snapshotter reports of its
// storage snapshot: its handle, ready with log's size, or the error msg.
func (m *volsyncMember) reportContent(ctx context.Context, content *snapshotv1.VolumeSnapshotContent, handle string, log []string, msg string) error {
	patch := client.MergeFrom(content.DeepCopy())
	content.Status = &snapshotv1.VolumeSnapshotContentStatus{SnapshotHandle: &handle, ReadyToUse: ptr.To(msg == "")}
	if msg != "" {
		content.Status.Error = &snapshotv1.VolumeSnapshotError{Time: &metav1.Time{Time: time.Now()}, Message: &msg}
	} else {
		size := restoreSize(log).Value()
		content.Status.RestoreSize = &size
		content.Status.CreationTime = ptr.To(time.Now().UnixNano())
	}
	return m.client.Status().Patch(ctx, content, patch)
}

// contentProtected plays the snapshot controller and the snapshotter for the deletion of a
// content of the member's storage: a content whose policy is Delete keeps the finalizer
// until, deleted, its storage snapshot is gone; a content Retain goes at once and its
// storage snapshot stays, as with any CSI driver.
func (m *volsyncMember) contentProtected(ctx context.Context, name string) error {
	content := &snapshotv1.VolumeSnapshotContent{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: name}, content); err != nil {
		return client.IgnoreNotFound(err)
	}
	st := m.storage(content.Spec.Driver)
	deleting := content.DeletionTimestamp != nil
	if st == nil || content.Spec.DeletionPolicy != snapshotv1.VolumeSnapshotContentDelete || deleting != controllerutil.ContainsFinalizer(content, contentFinalizer) {
		return nil
	}
	patch := client.MergeFrom(content.DeepCopy())
	if deleting {
		st.ledger.deleteSnapshot(contentHandle(content))
		controllerutil.RemoveFinalizer(content, contentFinalizer)
	} else {
		controllerutil.AddFinalizer(content, contentFinalizer)
	}
	return client.IgnoreNotFound(m.client.Patch(ctx, content, patch))
}

// contentHandle is the handle of a content's storage snapshot: the one its status reports,
// else the one a pre-provisioned content names.
func contentHandle(content *snapshotv1.VolumeSnapshotContent) string {
	if content.Status != nil && ptr.Deref(content.Status.SnapshotHandle, "") != "" {
		return *content.Status.SnapshotHandle
	}
	return ptr.Deref(content.Spec.Source.SnapshotHandle, "")
}

// restoreSize is the size a volume restored from a snapshot holding log needs.
func restoreSize(log []string) *resource.Quantity {
	return ptr.To(resource.MustParse(strconv.Itoa(len(log)) + "Ki"))
}
