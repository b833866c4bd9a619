package simstorage

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
)

// Annotations the PV binder and the provisioners of Kubernetes agree on.
const (
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
)

// driver is the domain's CSI driver in one member: it provisions PVs for claims, attaches and
// detaches their volumes, releases the backing volume of a released PV with reclaimPolicy
// Delete, and executes the member's NetworkFences of the domain.
type driver struct {
	storage  *Storage
	member   string
	client   client.Client
	reader   client.Reader // the member's API server, uncached
	recorder events.EventRecorder
}

func (d *driver) setup(mgr ctrl.Manager, opts controller.Options) error {
	name := fmt.Sprintf("simstorage-%s-%s", d.storage.name, d.member)
	if err := ctrl.NewControllerManagedBy(mgr).Named(name + "-provisioner").
		For(&corev1.PersistentVolumeClaim{}).WithOptions(opts).
		Complete(reconcile.Func(d.provision)); err != nil {
		return err
	}
	if err := ctrl.NewControllerManagedBy(mgr).Named(name + "-volumes").
		For(&corev1.PersistentVolume{}).WithOptions(opts).
		Complete(reconcile.Func(d.observe)); err != nil {
		return err
	}
	// As the csi-addons controller, act on spec changes only: its own writes to the
	// finalizers and the status do not start the operation again.
	return ctrl.NewControllerManagedBy(mgr).Named(name+"-fences").
		For(&csiaddonsv1alpha1.NetworkFence{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).WithOptions(opts).
		Complete(reconcile.Func(d.fence))
}

// provision creates the PV for a pending claim that the binder handed to this driver, as an
// external CSI provisioner does.
func (d *driver) provision(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pvc := &corev1.PersistentVolumeClaim{}
	if err := d.client.Get(ctx, req.NamespacedName, pvc); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pvc.Spec.VolumeName != "" || pvc.Status.Phase != corev1.ClaimPending ||
		pvc.DeletionTimestamp != nil || pvc.Annotations[annStorageProvisioner] != d.storage.Provisioner() ||
		pvc.Spec.StorageClassName == nil {
		return reconcile.Result{}, nil
	}
	class := &storagev1.StorageClass{}
	if err := d.client.Get(ctx, client.ObjectKey{Name: *pvc.Spec.StorageClassName}, class); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if class.Provisioner != d.storage.Provisioner() {
		return reconcile.Result{}, nil
	}
	if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer &&
		pvc.Annotations[annSelectedNode] == "" {
		return reconcile.Result{}, nil
	}

	if err := d.storage.volumes.answer(ctx); err != nil {
		return reconcile.Result{}, fmt.Errorf("provisioning for claim %s: %w", req.NamespacedName, err)
	}
	log, wait, err := d.restoreFrom(ctx, pvc)
	if err != nil || wait {
		return reconcile.Result{RequeueAfter: restoreRetry}, err
	}
	pv := d.storage.newPV(pvc, class)
	if d.storage.ledger.create(Volume{
		Handle:        pv.Spec.CSI.VolumeHandle,
		Capacity:      pv.Spec.Capacity[corev1.ResourceStorage],
		AccessModes:   pv.Spec.AccessModes,
		ProvisionedIn: d.member,
	}) && log != nil {
		if err := d.storage.load(pv.Spec.CSI.VolumeHandle, log); err != nil {
			return reconcile.Result{}, err
		}
	}
	if err := d.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return reconcile.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Provisioned volume", "pvc", client.ObjectKeyFromObject(pvc), "pv", pv.Name, "handle", pv.Spec.CSI.VolumeHandle)
	return reconcile.Result{}, nil
}

// restoreRetry paces a claim waiting for the snapshot it is restored from.
const restoreRetry = time.Second

// restoreFrom is the log of the VolumeSnapshot a claim's dataSourceRef names, which the new
// volume starts with; wait is true until the snapshot is ready to use, as the external
// provisioner waits. The log is the storage snapshot's whose handle the snapshot's bound
// content names, whichever member or namespace cut it: a pre-provisioned content imports a
// snapshot by its handle. A claim with no such source starts empty. A snapshot that is not
// this storage's, or whose storage snapshot is gone, fails the provisioning, with a warning
// event on the claim as the external provisioner records.
func (d *driver) restoreFrom(ctx context.Context, pvc *corev1.PersistentVolumeClaim) ([]string, bool, error) {
	src := pvc.Spec.DataSourceRef
	if src == nil || src.Kind != "VolumeSnapshot" || ptr.Deref(src.APIGroup, "") != snapshotv1.GroupName {
		return nil, false, nil
	}
	snap := &snapshotv1.VolumeSnapshot{}
	if err := d.reader.Get(ctx, client.ObjectKey{Namespace: pvc.Namespace, Name: src.Name}, snap); err != nil {
		return nil, true, client.IgnoreNotFound(err)
	}
	if snap.Status == nil || !ptr.Deref(snap.Status.ReadyToUse, false) || snap.Status.BoundVolumeSnapshotContentName == nil {
		if snap.Status != nil && snap.Status.Error != nil {
			d.provisioningFailed(pvc, fmt.Errorf("snapshot %s/%s is not ready: %s", pvc.Namespace, src.Name, ptr.Deref(snap.Status.Error.Message, "")))
		}
		return nil, true, nil
	}
	content := &snapshotv1.VolumeSnapshotContent{}
	if err := d.reader.Get(ctx, client.ObjectKey{Name: *snap.Status.BoundVolumeSnapshotContentName}, content); err != nil {
		return nil, true, client.IgnoreNotFound(err)
	}
	if content.Spec.Driver != d.storage.Provisioner() {
		return nil, true, d.provisioningFailed(pvc, fmt.Errorf("snapshot %s/%s is of driver %s, not %s", pvc.Namespace, src.Name, content.Spec.Driver, d.storage.Provisioner()))
	}
	handle := contentHandle(content)
	log, ok := d.storage.ledger.snapshotLog(handle)
	if !ok {
		return nil, true, d.provisioningFailed(pvc, fmt.Errorf("snapshot %s of %s/%s does not exist on storage %s", handle, pvc.Namespace, src.Name, d.storage.name))
	}
	return log, false, nil
}

// provisioningFailed records a warning event on the claim, and returns err.
func (d *driver) provisioningFailed(pvc *corev1.PersistentVolumeClaim, err error) error {
	d.recorder.Eventf(pvc, nil, corev1.EventTypeWarning, "ProvisioningFailed", "Provision", "failed to provision volume: %v", err)
	return err
}

// newPV builds the PV for a claim. Its name and handle derive from the claim's UID, so a retry
// finds the volume it made before instead of making another.
func (s *Storage) newPV(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass) *corev1.PersistentVolume {
	reclaim := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaim = *class.ReclaimPolicy
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "pvc-" + string(pvc.UID),
			Annotations: map[string]string{annProvisionedBy: s.Provisioner()},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class.Name,
			MountOptions:                  class.MountOptions,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver:           s.Provisioner(),
				VolumeHandle:     s.name + "-" + string(pvc.UID),
				VolumeAttributes: class.Parameters,
			}},
		},
	}
}

// attachRetry paces a refused attach, as the external attacher retries a failed
// ControllerPublishVolume.
const attachRetry = 500 * time.Millisecond

// observe plays the external attacher and provisioner for a PV of this driver. A Bound PV
// gets the attacher's finalizer and then the volume attached to the member; a PV that is no
// longer Bound has the volume detached and then loses the finalizer, so the PV cannot leave
// the member's API server before the storage let go of it. A released PV whose
// reclaimPolicy is Delete then has its backing volume deleted, and is deleted.
func (d *driver) observe(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	pv := &corev1.PersistentVolume{}
	if err := d.client.Get(ctx, req.NamespacedName, pv); err != nil {
		if apierrors.IsNotFound(err) {
			d.storage.ledger.see(d.member, req.Name, "")
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if pv.Spec.CSI == nil || pv.Spec.CSI.Driver != d.storage.Provisioner() {
		return reconcile.Result{}, nil
	}
	handle := pv.Spec.CSI.VolumeHandle
	d.storage.ledger.see(d.member, pv.Name, handle)
	if pv.Status.Phase == corev1.VolumeBound {
		return d.attach(ctx, pv, handle)
	}
	if d.storage.ledger.holds(d.member, handle) {
		if err := d.storage.volumes.answer(ctx); err != nil {
			return reconcile.Result{}, fmt.Errorf("detaching %s: %w", handle, err)
		}
	}
	d.storage.ledger.detach(d.member, pv.Name, handle)
	if err := d.setFinalizer(ctx, pv, d.storage.attacherFinalizer(), false); err != nil {
		return reconcile.Result{}, err
	}
	if pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return reconcile.Result{}, nil
	}
	return reconcile.Result{}, d.release(ctx, pv, handle)
}

// attach attaches the volume of a Bound PV, after the PV carries the attacher's finalizer.
func (d *driver) attach(ctx context.Context, pv *corev1.PersistentVolume, handle string) (reconcile.Result, error) {
	if !controllerutil.ContainsFinalizer(pv, d.storage.attacherFinalizer()) {
		return reconcile.Result{}, d.setFinalizer(ctx, pv, d.storage.attacherFinalizer(), true)
	}
	if !d.storage.ledger.holds(d.member, handle) {
		if err := d.storage.volumes.answer(ctx); err != nil {
			return reconcile.Result{}, fmt.Errorf("attaching %s: %w", handle, err)
		}
	}
	if err := d.storage.ledger.attach(d.member, pv.Name, handle); err != nil {
		ctrl.LoggerFrom(ctx).Info("Attach refused", "pv", pv.Name, "handle", handle, "reason", err.Error())
		return reconcile.Result{RequeueAfter: attachRetry}, nil
	}
	return reconcile.Result{}, nil
}

// release deletes the backing volume of a released PV with reclaimPolicy Delete, then the
// PV, as a CSI provisioner that honours the reclaim policy does, also for a PV already being
// deleted.
func (d *driver) release(ctx context.Context, pv *corev1.PersistentVolume, handle string) error {
	if err := d.storage.volumes.answer(ctx); err != nil {
		return fmt.Errorf("releasing %s: %w", handle, err)
	}
	released, refs, err := d.storage.ledger.release(d.member, pv, handle)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("Release refused", "pv", pv.Name, "handle", handle, "reason", err.Error())
		return err
	}
	if released {
		d.storage.ledger.referenced(handle, d.member, pv.Name, d.storage.stillReferenced(ctx, handle, refs))
		ctrl.LoggerFrom(ctx).Info("Released volume", "pv", pv.Name, "handle", handle)
	}
	if pv.DeletionTimestamp != nil {
		return nil
	}
	if err := d.client.Delete(ctx, pv); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// setFinalizer adds or removes finalizer on obj.
func (d *driver) setFinalizer(ctx context.Context, obj client.Object, finalizer string, add bool) error {
	orig := obj.DeepCopyObject().(client.Object)
	if add && !controllerutil.AddFinalizer(obj, finalizer) || !add && !controllerutil.RemoveFinalizer(obj, finalizer) {
		return nil
	}
	return client.IgnoreNotFound(d.client.Patch(ctx, obj, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}
