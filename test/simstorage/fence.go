package simstorage

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
)

// networkFenceFinalizer is the finalizer the csi-addons controller keeps on a NetworkFence it
// has acted on.
const networkFenceFinalizer = "csiaddons.openshift.io/network-fence"

// fenceRetry paces the retries of a failed fencing operation, as the csi-addons controller
// requeues a request that failed.
const fenceRetry = time.Second

// fence plays the csi-addons controller and the driver's fencing service for a NetworkFence
// whose NetworkFenceClass names this driver, or whose class is missing. It executes
// spec.fenceState on spec.cidrs in the storage and reports the outcome in status.result and
// status.message. Deleting a NetworkFence only lets its finalizer go: as with csi-addons, it
// does not unfence. A NetworkFence that names no class (the deprecated spec.driver) is left
// alone.
func (d *driver) fence(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	nf := &csiaddonsv1alpha1.NetworkFence{}
	if err := d.client.Get(ctx, req.NamespacedName, nf); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if nf.Spec.NetworkFenceClassName == "" {
		return reconcile.Result{}, nil
	}
	class := &csiaddonsv1alpha1.NetworkFenceClass{}
	classErr := d.reader.Get(ctx, client.ObjectKey{Name: nf.Spec.NetworkFenceClassName}, class)
	switch {
	case classErr == nil && class.Spec.Provisioner != d.storage.Provisioner():
		return reconcile.Result{}, nil
	case classErr != nil && !apierrors.IsNotFound(classErr):
		return reconcile.Result{}, classErr
	}
	if nf.DeletionTimestamp != nil {
		return reconcile.Result{}, d.setFinalizer(ctx, nf, networkFenceFinalizer, false)
	}
	if classErr != nil {
		return d.report(ctx, nf, fmt.Errorf("failed to get networkfenceclass with name %q: %w", nf.Spec.NetworkFenceClassName, classErr))
	}
	if err := d.setFinalizer(ctx, nf, networkFenceFinalizer, true); err != nil {
		return reconcile.Result{}, err
	}
	return d.report(ctx, nf, d.storage.executeFence(ctx, nf.Spec))
}

// report writes the outcome of the operation into the NetworkFence's status, with the
// messages csi-addons writes, and retries a failed operation.
func (d *driver) report(ctx context.Context, nf *csiaddonsv1alpha1.NetworkFence, opErr error) (reconcile.Result, error) {
	orig := nf.DeepCopy()
	log := ctrl.LoggerFrom(ctx).WithValues("networkFence", nf.Name, "state", nf.Spec.FenceState, "cidrs", nf.Spec.Cidrs)
	var retry reconcile.Result
	switch {
	case opErr != nil:
		nf.Status.Result, nf.Status.Message = csiaddonsv1alpha1.FencingOperationResultFailed, opErr.Error()
		retry.RequeueAfter = fenceRetry
		log.Info("Fencing operation failed", "reason", opErr.Error())
	case nf.Spec.FenceState == csiaddonsv1alpha1.Unfenced:
		nf.Status.Result, nf.Status.Message = csiaddonsv1alpha1.FencingOperationResultSucceeded, csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage
		log.Info("Unfenced")
	default:
		nf.Status.Result, nf.Status.Message = csiaddonsv1alpha1.FencingOperationResultSucceeded, csiaddonsv1alpha1.FenceOperationSuccessfulMessage
		log.Info("Fenced")
	}
	return retry, client.IgnoreNotFound(d.client.Status().Patch(ctx, nf, client.MergeFrom(orig)))
}

// executeFence runs a fencing operation on the array: after the delay SlowFencing set, it
// fails with the message FailFencing set, or fences or unfences the CIDRs.
func (s *Storage) executeFence(ctx context.Context, spec csiaddonsv1alpha1.NetworkFenceSpec) error {
	if err := s.fencing.answer(ctx); err != nil {
		return err
	}
	return s.ledger.fence(spec.Cidrs, spec.FenceState != csiaddonsv1alpha1.Unfenced)
}

// FailFencing makes every fencing operation from now on fail with msg, reported in the
// NetworkFence's status.message; "" makes them succeed again.
func (s *Storage) FailFencing(msg string) { s.fencing.fail(msg) }

// SlowFencing makes every fencing operation, those under way too, take d from its start
// before it takes effect and is reported; 0 makes them immediate again.
func (s *Storage) SlowFencing(d time.Duration) { s.fencing.slow(d) }

// Fenced tells whether member is fenced: one of its node CIDRs lies within a fenced CIDR.
func (s *Storage) Fenced(member string) bool { return s.ledger.fenced(member) }

// PowerOff says that member's nodes are powered off, as an admin who fences it manually
// states: it reaches the storage no more, and the volumes it has attached do not keep them
// from other members. PowerOn powers them on again, which is checked as an unfence is: a
// member must not come back with an owned volume attached that another member attached.
func (s *Storage) PowerOff(member string) { s.ledger.power(member, false) }

// PowerOn powers member's nodes on again; see PowerOff.
func (s *Storage) PowerOn(member string) { s.ledger.power(member, true) }
