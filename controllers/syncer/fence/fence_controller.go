package fence

import (
	"context"
	"fmt"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Reconciler executes the Fences given to the target.
type Reconciler struct {
	syncio.Clients
	Target transform.Target
	// SyncTargetName names the executing target in its reports.
	SyncTargetName string
}

// SetupWithManager watches the target's Fences on the hub and its NetworkFences in the member,
// and looks once at start at the Fences the syncer's finalizer holds.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named("fence").WithOptions(opts).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&storagev1alpha1.Fence{}), &handler.EnqueueRequestForObject{})).
		WatchesRawSource(source.Kind(mgr.GetCache(), client.Object(&csiaddonsv1alpha1.NetworkFence{}), handler.EnqueueRequestsFromMapFunc(syncio.Requests(r.Target, true)))).
		WatchesRawSource(syncio.AtStart()).
		Complete(r)
}

// Reconcile keeps the NetworkFence of one Fence as the Fence asks, and reports it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req == syncio.HeldRequest {
		// A syncer stopped after it put its finalizer on a Fence and before it made the
		// NetworkFence, which another target executes when it starts again, holds it.
		// A NetworkFence kept is looked at again on its own events.
		return ctrl.Result{}, syncio.ReconcileHeld(ctx, r.HubReader, r.Target, &storagev1alpha1.FenceList{}, r.Reconcile)
	}
	nf := &csiaddonsv1alpha1.NetworkFence{}
	if err := r.Member.Get(ctx, client.ObjectKey{Name: networkFenceName(req.Name)}, nf); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		nf = nil
	}
	f := &storagev1alpha1.Fence{}
	if err := r.Hub.Get(ctx, req.NamespacedName, f); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		f = nil
	}
	if f == nil || !r.executes(f) {
		return r.release(ctx, req.Name, nf)
	}
	spec := f.Status.NetworkFence
	if spec == nil || spec.ClassName == "" || len(spec.CIDRs) == 0 {
		return ctrl.Result{}, nil // the fencing controller has not said what to fence yet
	}
	if nf == nil {
		if r.unfenced(f) {
			// Done: the NetworkFence went after the unfence.
			return ctrl.Result{}, syncio.LetGo(ctx, r.Hub, r.Target, f)
		}
		// The finalizer goes on before the NetworkFence exists (see the package doc).
		if f.Spec.State == storagev1alpha1.Fenced {
			if err := syncio.Hold(ctx, r.Hub, r.Target, f); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, r.create(ctx, f)
	}
	if want := csiaddonsv1alpha1.FenceState(f.Spec.State); nf.Spec.FenceState != want {
		if fenceUnanswered(nf) {
			// A Fence lifted mid-fence: the storage's answer to the fence comes first, and is
			// reported, so that the hub sees whether the target was cut off before it is let
			// back; the unfence is asked on the NetworkFence's next event.
			return ctrl.Result{}, r.report(ctx, f, nf)
		}
		patch := client.MergeFrom(nf.DeepCopy())
		nf.Spec.FenceState = want
		ctrl.LoggerFrom(ctx).Info("Changing the NetworkFence", "networkFence", nf.Name, "fenceState", want)
		return ctrl.Result{}, r.Member.Patch(ctx, nf, patch)
	}
	if err := r.report(ctx, f, nf); err != nil {
		return ctrl.Result{}, err
	}
	if unfencedBy(nf) {
		return ctrl.Result{}, r.remove(ctx, nf)
	}
	return ctrl.Result{}, nil
}

// fenceUnanswered tells whether the NetworkFence asks for the fence and the storage has not
// answered yet: the operation is under way and cannot be called back.
func fenceUnanswered(nf *csiaddonsv1alpha1.NetworkFence) bool {
	return nf.Spec.FenceState == csiaddonsv1alpha1.Fenced && nf.Status.Result == ""
}

// unfencedBy tells whether the NetworkFence asks for the unfence and the storage confirmed it:
// only then may it go, as deleting one does not unfence.
func unfencedBy(nf *csiaddonsv1alpha1.NetworkFence) bool {
	return nf.Spec.FenceState == csiaddonsv1alpha1.Unfenced && nf.Status.Result == csiaddonsv1alpha1.FencingOperationResultSucceeded &&
		nf.Status.Message == csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage
}

// executes tells whether the Fence is this target's to execute now.
func (r *Reconciler) executes(f *storagev1alpha1.Fence) bool {
	return f.Spec.Mode != storagev1alpha1.Manual && r.Target.ReportsStatus(f)
}

// unfenced tells whether this target reported that its NetworkFence unfenced the Fence's
// target.
func (r *Reconciler) unfenced(f *storagev1alpha1.Fence) bool {
	x := f.Status.NetworkFence
	return x != nil && f.Spec.State == storagev1alpha1.Unfenced && x.ReportedBy == r.SyncTargetName && x.FenceState == storagev1alpha1.Unfenced &&
		x.Result == string(csiaddonsv1alpha1.FencingOperationResultSucceeded) && x.Message == csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage
}

func networkFenceName(fence string) string { return "custody-" + fence }

func (r *Reconciler) create(ctx context.Context, f *storagev1alpha1.Fence) error {
	nf := &csiaddonsv1alpha1.NetworkFence{
		ObjectMeta: metav1.ObjectMeta{
			Name:        networkFenceName(f.Name),
			Labels:      r.Target.Markers(),
			Annotations: map[string]string{transform.HubNamespaceAnnotation: f.Name},
		},
		Spec: csiaddonsv1alpha1.NetworkFenceSpec{
			NetworkFenceClassName: f.Status.NetworkFence.ClassName,
			FenceState:            csiaddonsv1alpha1.FenceState(f.Spec.State),
			Cidrs:                 f.Status.NetworkFence.CIDRs,
		},
	}
	ctrl.LoggerFrom(ctx).Info("Creating the NetworkFence", "networkFence", nf.Name, "fenceState", nf.Spec.FenceState, "cidrs", nf.Spec.Cidrs)
	if err := r.Member.Create(ctx, nf); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating NetworkFence %s: %w", nf.Name, err)
	}
	return nil
}

// report writes the NetworkFence's answer into the Fence's status.
func (r *Reconciler) report(ctx context.Context, f *storagev1alpha1.Fence, nf *csiaddonsv1alpha1.NetworkFence) error {
	got := storagev1alpha1.NetworkFenceStatus{
		ReportedBy: r.SyncTargetName, FenceState: storagev1alpha1.FenceState(nf.Spec.FenceState),
		Result: string(nf.Status.Result), Message: nf.Status.Message,
	}
	if have := f.Status.NetworkFence; have.ReportedBy == got.ReportedBy && have.FenceState == got.FenceState &&
		have.Result == got.Result && have.Message == got.Message {
		return nil
	}
	applied := &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: f.Name},
		Status: storagev1alpha1.FenceStatus{NetworkFence: &got}}
	// A Fence that went meanwhile needs no report.
	return client.IgnoreNotFound(status.Apply(ctx, r.Hub, applied, transform.FieldManager+"-"+r.Target.Key))
}

// keepRecheck is how often a NetworkFence kept for a Fence another target executes now is
// looked at again: the Fence is not in this syncer's cache, so no event says it was lifted.
const keepRecheck = 5 * time.Second

// release lets go of the NetworkFence of a Fence this target does not execute (any more).
// Deleting a NetworkFence does not unfence, so one that may still fence is unfenced first:
// it stays as it is while the hub's Fence still holds the target (its executor changed: the
// target stays fenced either way), is set Unfenced once that Fence was lifted, and is
// deleted once the storage confirmed the unfence; then the syncer's finalizer leaves the
// Fence.
func (r *Reconciler) release(ctx context.Context, fence string, nf *csiaddonsv1alpha1.NetworkFence) (ctrl.Result, error) {
	switch {
	case nf != nil && (!r.Target.Owns(nf) || !nf.DeletionTimestamp.IsZero()):
		return ctrl.Result{}, nil
	case nf != nil && unfencedBy(nf):
		return ctrl.Result{}, r.remove(ctx, nf)
	case nf != nil && nf.Spec.FenceState == csiaddonsv1alpha1.Unfenced:
		return ctrl.Result{}, nil // the storage has not confirmed the unfence yet
	}
	// The Fence is no longer in this syncer's cache: read it.
	f := &storagev1alpha1.Fence{}
	if err := r.HubReader.Get(ctx, client.ObjectKey{Name: fence}, f); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		f = nil
	}
	switch {
	case nf == nil && f == nil:
		return ctrl.Result{}, nil
	case nf == nil:
		return ctrl.Result{}, syncio.LetGo(ctx, r.Hub, r.Target, f)
	case f != nil && f.Status.Phase != storagev1alpha1.FenceUnfenced:
		return ctrl.Result{RequeueAfter: keepRecheck}, nil
	}
	// A Fence gone with the hub it was on (a hub wiped under the syncer) was not lifted.
	if err := r.SameHub.Confirm(ctx); err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(nf.DeepCopy())
	nf.Spec.FenceState = csiaddonsv1alpha1.Unfenced
	ctrl.LoggerFrom(ctx).Info("Unfencing a NetworkFence whose Fence was lifted", "networkFence", nf.Name)
	return ctrl.Result{}, r.Member.Patch(ctx, nf, patch)
}

// remove deletes the NetworkFence, if the syncer made it.
func (r *Reconciler) remove(ctx context.Context, nf *csiaddonsv1alpha1.NetworkFence) error {
	if nf == nil || !r.Target.Owns(nf) || !nf.DeletionTimestamp.IsZero() {
		return nil
	}
	ctrl.LoggerFrom(ctx).Info("Deleting the NetworkFence", "networkFence", nf.Name, "fenceState", nf.Spec.FenceState)
	return client.IgnoreNotFound(r.Member.Delete(ctx, nf))
}
