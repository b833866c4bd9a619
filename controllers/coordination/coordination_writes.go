package coordination

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/protection"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/coordination"
	"github.com/custody-dev/custody/fencing"
)

// writes gathers a decision's actions into at most one patch of the claim, one of the PV, and
// a deletion or a status write of the PV, run in the order the actions first name them.
type writes struct {
	// claim is patched from base, the claim as read; pv from the version pvRead.
	claim, base             *corev1.PersistentVolumeClaim
	pv                      *corev1.PersistentVolume
	pvRead                  string
	domain                  string
	targets                 []workloadv1alpha1.SyncTarget
	claimPatch, volumePatch client.Patch
	// fence names the Fence whose hold the writes stand on, to be read from the API server
	// before any of them is made; empty when they stand on none.
	fence string
	order []func(context.Context, client.Client) error
	kinds []string
}

func newWrites(s *scope, domain string) *writes {
	w := &writes{claim: s.claim.DeepCopy(), base: s.read, domain: domain, targets: s.targets}
	if w.base == nil {
		w.base = s.claim // not changed since it was read; the writes change w.claim
	}
	if s.volume != nil {
		w.pv, w.pvRead = s.volume.DeepCopy(), s.volume.ResourceVersion
	}
	return w
}

// remember tells replaced the versions of the claim and the PV that the writes made so far
// replaced: each write leaves the object it wrote at the version written.
func (w *writes) remember(replaced *versions.Replaced) {
	req := client.ObjectKeyFromObject(w.base)
	replaced.Wrote(req, req, w.base.ResourceVersion, w.claim.ResourceVersion)
	if w.pv != nil {
		replaced.Wrote(req, client.ObjectKeyFromObject(w.pv), w.pvRead, w.pv.ResourceVersion)
	}
}

// plan gathers the writes of a decision: its actions, the claim's storage domain, and the
// claim's placement when it changed as it followed its namespace.
func plan(s *scope, d coordination.Decision) *writes {
	w := newWrites(s, d.Domain)
	for _, a := range d.Actions {
		w.add(a)
	}
	w.ensureDomain(d)
	if s.read != nil {
		w.onClaim(func(*corev1.PersistentVolumeClaim) {}) // its placement changed
	}
	return w
}

func (w *writes) onClaim(f func(*corev1.PersistentVolumeClaim)) {
	if w.claimPatch == nil {
		w.claimPatch = client.MergeFromWithOptions(w.base, client.MergeFromWithOptimisticLock{})
		w.order = append(w.order, func(ctx context.Context, c client.Client) error { return c.Patch(ctx, w.claim, w.claimPatch) })
	}
	f(w.claim)
}

func (w *writes) onVolume(f func(*corev1.PersistentVolume)) {
	if w.volumePatch == nil {
		w.volumePatch = client.MergeFromWithOptions(w.pv.DeepCopy(), client.MergeFromWithOptimisticLock{})
		w.order = append(w.order, func(ctx context.Context, c client.Client) error { return c.Patch(ctx, w.pv, w.volumePatch) })
	}
	f(w.pv)
}

// add turns one action into changes of the claim or the PV.
func (w *writes) add(a coordination.Action) {
	w.kinds = append(w.kinds, fmt.Sprintf("%s(%s)", a.Kind, a.Target))
	key := a.Target
	switch a.Kind {
	case coordination.SyncClaim:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			workloadv1alpha1.SetState(c, key, workloadv1alpha1.ResourceStateSync)
		})
	case coordination.DropClaim:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) { workloadv1alpha1.Release(c, key) })
	case coordination.Hold, coordination.Unhold:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			workloadv1alpha1.SetHold(c, key, storagev1alpha1.HoldFinalizer, a.Kind == coordination.Hold)
		})
	case coordination.SetReleasePolicy:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(a.Policy))
		})
	case coordination.BindClaim:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = w.pv.Name })
		w.onVolume(func(pv *corev1.PersistentVolume) {
			pv.Spec.ClaimRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: w.claim.Namespace, Name: w.claim.Name, UID: w.claim.UID}
			if a.Policy != "" {
				pv.Spec.PersistentVolumeReclaimPolicy = a.Policy
			}
		})
	case coordination.SyncVolume:
		w.onVolume(func(pv *corev1.PersistentVolume) {
			workloadv1alpha1.SetState(pv, key, workloadv1alpha1.ResourceStateSync)
			workloadv1alpha1.CancelRemoval(pv, key)
		})
	case coordination.RemoveVolume:
		w.onVolume(func(pv *corev1.PersistentVolume) { workloadv1alpha1.RequestRemoval(pv, key, time.Now()) })
	case coordination.ReleaseFenced:
		// The fenced target's syncer cannot acknowledge; its copies stay Retain in its member,
		// and its syncer removes them when it returns.
		w.fence = storagev1alpha1.FenceName(w.nameOf(key), w.domain)
		w.drop(key)
	case coordination.DropTarget:
		w.drop(key)
	case coordination.RequestFence:
		w.order = append(w.order, func(ctx context.Context, c client.Client) error { return requestFence(ctx, c, w.nameOf(key), w.domain) })
	case coordination.DeleteVolume:
		// The protection finalizer goes in the PV's patch, which a dropped target's labels may
		// share: the deletion then takes effect at once.
		if w.pv.DeletionTimestamp.IsZero() {
			w.onVolume(func(pv *corev1.PersistentVolume) { controllerutil.RemoveFinalizer(pv, protection.PVFinalizer) })
		}
		w.order = append(w.order, func(ctx context.Context, c client.Client) error { return protection.Delete(ctx, c, w.pv) })
	case coordination.RetainVolume:
		w.onVolume(func(pv *corev1.PersistentVolume) { retain(pv, w.claim, key) })
		w.order = append(w.order, func(ctx context.Context, c client.Client) error { return markReleased(ctx, c, w.pv) })
	case coordination.Finish:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			controllerutil.RemoveFinalizer(c, storagev1alpha1.VolumeFinalizer)
			controllerutil.RemoveFinalizer(c, protection.PVCFinalizer)
		})
	}
}

// drop takes the target off the claim and the PV in its syncer's place
// (workloadv1alpha1.Drop).
func (w *writes) drop(key string) {
	w.onClaim(func(c *corev1.PersistentVolumeClaim) { workloadv1alpha1.Drop(c, key) })
	if w.pv != nil {
		w.onVolume(func(pv *corev1.PersistentVolume) { workloadv1alpha1.Drop(pv, key) })
	}
}

// nameOf is the name of the SyncTarget whose key is key.
func (w *writes) nameOf(key string) string {
	if t := workloadv1alpha1.TargetWithKey(w.targets, key); t != nil {
		return t.Name
	}
	return key
}

// confirmFenced reads the Fence past the cache and fails unless it holds. A cache that
// still shows a Fence lifted a moment ago, with the target given the volume again since, must
// not release the target: the claim's and the PV's optimistic locks refuse a release decided
// on their older versions, and this read refuses one decided on an older Fence.
func confirmFenced(ctx context.Context, r client.Reader, name string) error {
	f := &storagev1alpha1.Fence{}
	switch err := r.Get(ctx, client.ObjectKey{Name: name}, f); {
	case apierrors.IsNotFound(err):
		f = nil
	case err != nil:
		return err
	}
	if state := fencing.Of(f); state != fencing.Fenced {
		return fmt.Errorf("fence %s is %s on the API server, not Fenced: the release waits", name, state)
	}
	return nil
}

// requestFence creates the Network Fence of the target in the domain, unless it exists.
func requestFence(ctx context.Context, c client.Client, target, domain string) error {
	f := &storagev1alpha1.Fence{
		ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(target, domain)},
		Spec: storagev1alpha1.FenceSpec{TargetName: target, Domain: domain,
			State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network},
	}
	if err := c.Create(ctx, f); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// retain makes the hub PV the record of the storage the deleted claim left: its claimRef
// keeps naming the claim, annotations name the target that held it last and the storage
// domain, and without the protection finalizer an admin's delete goes through.
func retain(pv *corev1.PersistentVolume, claim *corev1.PersistentVolumeClaim, lastOwner string) {
	controllerutil.RemoveFinalizer(pv, protection.PVFinalizer)
	if lastOwner != "" {
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagev1alpha1.LastOwnerAnnotation, lastOwner)
	}
	if d := claim.Annotations[storagev1alpha1.DomainAnnotation]; d != "" {
		metav1.SetMetaDataAnnotation(&pv.ObjectMeta, storagev1alpha1.DomainAnnotation, d)
	}
	// With the uid, a later claim of the same name does not find the PV as its own.
	if ref := pv.Spec.ClaimRef; ref != nil && ref.Namespace == claim.Namespace && ref.Name == claim.Name && ref.UID == "" {
		ref.UID = claim.UID
	}
}

// markReleased sets the hub PV's phase to Released, as a cluster's binder does for a Retain
// PV whose claim went. No syncer writes the status of a hub PV that no target holds.
func markReleased(ctx context.Context, c client.Client, pv *corev1.PersistentVolume) error {
	if pv.Status.Phase == corev1.VolumeReleased {
		return nil
	}
	released := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv.Name},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}}
	return status.Apply(ctx, c, released, fieldOwner)
}

// ensureDomain keeps the claim's storage domain annotation, which the scheduler reads to
// move the namespace only to targets that reach the volume.
func (w *writes) ensureDomain(d coordination.Decision) {
	if w.pv == nil || d.Domain == "" || !w.claim.DeletionTimestamp.IsZero() ||
		w.claim.Annotations[storagev1alpha1.DomainAnnotation] == d.Domain {
		return
	}
	w.kinds = append(w.kinds, "Domain("+d.Domain+")")
	w.onClaim(func(c *corev1.PersistentVolumeClaim) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.DomainAnnotation, d.Domain)
	})
}

func (w *writes) describe() string { return strings.Join(w.kinds, ", ") }
