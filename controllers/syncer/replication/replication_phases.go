package replication

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// pskKey is the key of VolSync's rsync-TLS pre-shared key in its Secret.
const pskKey = "psk.txt"

// imageRecheck is how often a latest image that is not ready yet is looked at again: the
// VolumeSnapshot is VolSync's, not in the syncer's cache.
const imageRecheck = 2 * time.Second

// meta gives an object the syncer makes for a VolumeReplication its markers and the way back.
func (r *Reconciler) meta(vr *storagev1alpha1.VolumeReplication, ns, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: ns, Name: name, Labels: r.Target.Markers(),
		Annotations: map[string]string{transform.HubNamespaceAnnotation: vr.Namespace, transform.HubNameAnnotation: vr.Name},
	}
}

// ensureKey copies the pair's pre-shared key from the hub into the member, where VolSync's
// mover on either side reads it. The key is made once with the pair and never changes, so
// the hub's Secret is read only while the member has no copy.
func (r *Reconciler) ensureKey(ctx context.Context, vr *storagev1alpha1.VolumeReplication, ns string) error {
	err := r.Member.Get(ctx, client.ObjectKey{Namespace: ns, Name: keyName(vr.Name)}, &corev1.Secret{})
	if !apierrors.IsNotFound(err) {
		return err
	}
	hubKey := &corev1.Secret{}
	if err := r.HubReader.Get(ctx, client.ObjectKey{Namespace: storagev1alpha1.KeyNamespace, Name: vr.Spec.KeySecret}, hubKey); err != nil {
		return fmt.Errorf("reading the pair's key %s/%s: %w", storagev1alpha1.KeyNamespace, vr.Spec.KeySecret, err)
	}
	psk, ok := hubKey.Data[pskKey]
	if !ok {
		return fmt.Errorf("the pair's key %s/%s has no %s", storagev1alpha1.KeyNamespace, vr.Spec.KeySecret, pskKey)
	}
	s := &corev1.Secret{ObjectMeta: r.meta(vr, ns, keyName(vr.Name)), Data: map[string][]byte{pskKey: psk}}
	return client.IgnoreAlreadyExists(r.Member.Create(ctx, s))
}

// receive keeps the ReplicationDestination, which takes a VolumeSnapshot of its volume after
// each sync, and reports its address and latest image.
func (r *Reconciler) receive(ctx context.Context, vr *storagev1alpha1.VolumeReplication, ns string) (ctrl.Result, error) {
	rd := &volsyncv1alpha1.ReplicationDestination{}
	err := r.Member.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName(vr.Name)}, rd)
	if apierrors.IsNotFound(err) {
		claim := &corev1.PersistentVolumeClaim{}
		if err := r.HubReader.Get(ctx, client.ObjectKeyFromObject(vr), claim); err != nil {
			return ctrl.Result{}, r.reportError(ctx, vr, receives, fmt.Errorf("reading the claim: %w", err))
		}
		class := vr.Spec.StorageClassName
		if class == nil {
			class = storagev1alpha1.ClaimClass(claim.Annotations, claim.Spec.StorageClassName)
		}
		rd = &volsyncv1alpha1.ReplicationDestination{
			ObjectMeta: r.meta(vr, ns, objectName(vr.Name)),
			Spec: volsyncv1alpha1.ReplicationDestinationSpec{RsyncTLS: &volsyncv1alpha1.ReplicationDestinationRsyncTLSSpec{
				ReplicationDestinationVolumeOptions: volsyncv1alpha1.ReplicationDestinationVolumeOptions{
					CopyMethod:       volsyncv1alpha1.CopyMethodSnapshot,
					Capacity:         ptr.To(claim.Spec.Resources.Requests[corev1.ResourceStorage]),
					StorageClassName: class,
					AccessModes:      claim.Spec.AccessModes,
				},
				KeySecret: ptr.To(keyName(vr.Name)),
			}},
		}
		ctrl.LoggerFrom(ctx).Info("Creating the ReplicationDestination", "replicationDestination", client.ObjectKeyFromObject(rd))
		return ctrl.Result{}, client.IgnoreAlreadyExists(r.Member.Create(ctx, rd))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	st := ptr.Deref(rd.Status, volsyncv1alpha1.ReplicationDestinationStatus{})
	got := &storagev1alpha1.ReplicationDestinationStatus{ReportedBy: r.SyncTargetName, UID: rd.UID, LastSyncTime: st.LastSyncTime}
	got.Result, got.Message = moverResult(st.LatestMoverStatus, st.Conditions)
	if tls := st.RsyncTLS; tls != nil {
		got.Address, got.Port = ptr.Deref(tls.Address, ""), ptr.Deref(tls.Port, 0)
	}
	var recheck time.Duration
	if img := st.LatestImage; img != nil && img.Kind == "VolumeSnapshot" {
		got.LatestImage = img.Name
		if t, d := st.LastSyncTime, st.LastSyncDuration; t != nil && d != nil {
			got.LatestImageTime = &metav1.Time{Time: t.Add(-d.Duration)}
		}
		snap := &snapshotv1.VolumeSnapshot{}
		switch err := r.MemberReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: img.Name}, snap); {
		case err == nil:
			got.LatestImageReady = snap.Status != nil && ptr.Deref(snap.Status.ReadyToUse, false)
			if got.LatestImageKept, err = r.keepImage(ctx, vr, snap); err != nil {
				return ctrl.Result{}, err
			}
		case !apierrors.IsNotFound(err):
			return ctrl.Result{}, err
		}
		if !got.LatestImageReady {
			recheck = imageRecheck
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, r.report(ctx, vr, storagev1alpha1.VolumeReplicationStatus{Destination: got})
}

// keepImage labels the image for VolSync to keep while the replication asks it to, and
// tells whether it is labelled.
func (r *Reconciler) keepImage(ctx context.Context, vr *storagev1alpha1.VolumeReplication, snap *snapshotv1.VolumeSnapshot) (bool, error) {
	if _, kept := snap.Labels[transform.KeepLabel]; kept || !vr.Spec.KeepImages {
		return kept, nil
	}
	patch := client.MergeFromWithOptions(snap.DeepCopy(), client.MergeFromWithOptimisticLock{})
	metav1.SetMetaDataLabel(&snap.ObjectMeta, transform.KeepLabel, "true")
	ctrl.LoggerFrom(ctx).Info("Keeping an image from VolSync's rotation", "volumeSnapshot", snap.Name)
	return true, r.Member.Patch(ctx, snap, patch)
}

// send keeps the ReplicationSource of the member's copy of the claim, which syncs to the
// destination's address on the schedule or the manual trigger, and reports its syncs. A
// source sends to one destination: one the replication moved from is made again.
func (r *Reconciler) send(ctx context.Context, vr *storagev1alpha1.VolumeReplication, ns string) (ctrl.Result, error) {
	// Only the destination's own report counts: one from before the replication reversed
	// names the address this member listened on.
	dst := vr.Status.Destination
	if dst == nil || dst.Address == "" || workloadv1alpha1.ToSyncTargetKey(dst.ReportedBy) != vr.Spec.Destination {
		return ctrl.Result{}, r.report(ctx, vr, storagev1alpha1.VolumeReplicationStatus{Source: &storagev1alpha1.ReplicationSourceStatus{
			ReportedBy: r.SyncTargetName, Message: "waiting for the destination " + vr.Spec.Destination + " to report its address",
		}})
	}
	trigger := &volsyncv1alpha1.ReplicationSourceTriggerSpec{Schedule: ptr.To(vr.Spec.Schedule)}
	if vr.Spec.ManualTrigger != "" {
		trigger = &volsyncv1alpha1.ReplicationSourceTriggerSpec{Manual: vr.Spec.ManualTrigger}
	}
	want := volsyncv1alpha1.ReplicationSourceSpec{
		SourcePVC: vr.Name,
		Trigger:   trigger,
		RsyncTLS: &volsyncv1alpha1.ReplicationSourceRsyncTLSSpec{
			ReplicationSourceVolumeOptions: volsyncv1alpha1.ReplicationSourceVolumeOptions{CopyMethod: volsyncv1alpha1.CopyMethodSnapshot},
			KeySecret:                      ptr.To(keyName(vr.Name)),
			Address:                        ptr.To(dst.Address),
		},
	}
	if dst.Port != 0 {
		want.RsyncTLS.Port = ptr.To(dst.Port)
	}
	rs := &volsyncv1alpha1.ReplicationSource{}
	err := r.Member.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName(vr.Name)}, rs)
	if apierrors.IsNotFound(err) {
		rs = &volsyncv1alpha1.ReplicationSource{ObjectMeta: r.meta(vr, ns, objectName(vr.Name)), Spec: want}
		if dst.UID != "" {
			rs.Annotations[destinationAnnotation] = string(dst.UID)
		}
		ctrl.LoggerFrom(ctx).Info("Creating the ReplicationSource", "replicationSource", client.ObjectKeyFromObject(rs), "destination", dst.Address)
		return ctrl.Result{}, client.IgnoreAlreadyExists(r.Member.Create(ctx, rs))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !rs.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // back with its deletion, to make it again
	}
	if had := rs.Spec.RsyncTLS; had == nil || ptr.Deref(had.Address, "") != dst.Address || sentTo(rs) != dst.UID {
		// The replication moved to another destination, or its destination was made again
		// (at the same address): it holds no image yet. VolSync syncs a new source at once,
		// but a source whose destination changed only at its next scheduled time: up to an
		// interval with no replica where the pair now keeps them.
		ctrl.LoggerFrom(ctx).Info("Deleting the ReplicationSource, to make it again for the new destination",
			"replicationSource", client.ObjectKeyFromObject(rs), "destination", dst.Address, "uid", dst.UID)
		return ctrl.Result{}, client.IgnoreNotFound(r.Member.Delete(ctx, rs))
	}
	if !equality.Semantic.DeepEqual(rs.Spec.Trigger, want.Trigger) || !equality.Semantic.DeepEqual(rs.Spec.RsyncTLS, want.RsyncTLS) {
		patch := client.MergeFrom(rs.DeepCopy())
		rs.Spec.Trigger, rs.Spec.RsyncTLS = want.Trigger, want.RsyncTLS
		return ctrl.Result{}, r.Member.Patch(ctx, rs, patch)
	}
	st := ptr.Deref(rs.Status, volsyncv1alpha1.ReplicationSourceStatus{})
	got := &storagev1alpha1.ReplicationSourceStatus{
		ReportedBy: r.SyncTargetName, LastSyncTime: st.LastSyncTime, LastSyncDuration: st.LastSyncDuration,
		NextSyncTime: st.NextSyncTime, LastManualSync: st.LastManualSync,
	}
	got.Result, got.Message = moverResult(st.LatestMoverStatus, st.Conditions)
	asked, quiesced, err := r.quiesced(ctx, vr, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	got.Quiesced = quiesced
	var recheck time.Duration
	if asked && !quiesced {
		recheck = imageRecheck // the member's pods are not in the syncer's cache
	}
	return ctrl.Result{RequeueAfter: recheck}, r.report(ctx, vr, storagev1alpha1.VolumeReplicationStatus{Source: got})
}

// destinationAnnotation on a ReplicationSource the syncer made is the UID of the
// ReplicationDestination it sends to.
const destinationAnnotation = "workload.custody.dev/destination-uid"

// sentTo is the UID of the ReplicationDestination the source was made for; empty when it was
// made for a destination that reported none.
func sentTo(rs *volsyncv1alpha1.ReplicationSource) types.UID {
	return types.UID(rs.Annotations[destinationAnnotation])
}

// quiesced tells whether a relocate asked to quiesce the claim's namespace, and whether it is
// quiesced here: no pod of the member that may still run uses the claim's copy.
func (r *Reconciler) quiesced(ctx context.Context, vr *storagev1alpha1.VolumeReplication, ns string) (asked, quiesced bool, err error) {
	if asked, _, err := syncio.QuiesceAsked(ctx, r.Hub, r.HubReader, vr.Namespace); err != nil || !asked {
		return false, false, err
	}
	pods := &corev1.PodList{}
	if err := r.MemberReader.List(ctx, pods, client.InNamespace(ns)); err != nil {
		return true, false, err
	}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if c := v.PersistentVolumeClaim; c != nil && c.ClaimName == vr.Name {
				return true, false, nil
			}
		}
	}
	return true, true, nil
}

// moverResult is the last mover's result and, when a sync failed, why.
func moverResult(m *volsyncv1alpha1.MoverStatus, conditions []metav1.Condition) (string, string) {
	var result, msg string
	if m != nil {
		result = string(m.Result)
		if m.Result == volsyncv1alpha1.MoverResultFailed {
			msg = m.Logs
		}
	}
	if c := meta.FindStatusCondition(conditions, volsyncv1alpha1.ConditionSynchronizing); c != nil && c.Reason == volsyncv1alpha1.SynchronizingReasonError {
		msg = c.Message
	}
	return result, msg
}

// report writes the syncer's part of the VolumeReplication's status, unless the status
// already says it.
func (r *Reconciler) report(ctx context.Context, vr *storagev1alpha1.VolumeReplication, st storagev1alpha1.VolumeReplicationStatus) error {
	if said(vr.Status.Source, st.Source) && said(vr.Status.Destination, st.Destination) {
		return nil
	}
	applied := &storagev1alpha1.VolumeReplication{ObjectMeta: metav1.ObjectMeta{Namespace: vr.Namespace, Name: vr.Name}, Status: st}
	return client.IgnoreNotFound(status.Apply(ctx, r.Hub, applied, transform.FieldManager+"-"+r.Target.Key))
}

// reportError reports why the target's side cannot be set up, and returns err to retry.
func (r *Reconciler) reportError(ctx context.Context, vr *storagev1alpha1.VolumeReplication, role role, err error) error {
	st := storagev1alpha1.VolumeReplicationStatus{}
	switch role {
	case sends:
		st.Source = &storagev1alpha1.ReplicationSourceStatus{ReportedBy: r.SyncTargetName, Result: string(volsyncv1alpha1.MoverResultFailed), Message: err.Error()}
	case receives:
		st.Destination = &storagev1alpha1.ReplicationDestinationStatus{ReportedBy: r.SyncTargetName, Result: string(volsyncv1alpha1.MoverResultFailed), Message: err.Error()}
	}
	if rerr := r.report(ctx, vr, st); rerr != nil {
		ctrl.LoggerFrom(ctx).Error(rerr, "Reporting a replication error")
	}
	return err
}

// said tells whether the status holds a side's report already (none reported: nothing to
// say), compared as the API server stores them: its times are to the second, and the time
// of an image, its sync's end less the sync's duration, is computed to the nanosecond.
func said[T any](have, report *T) bool {
	if report == nil {
		return true
	}
	a, errA := json.Marshal(have)
	b, errB := json.Marshal(report)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}
