package coordination

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/coordination"
)

// The finalizers a hub API server's StorageObjectInUseProtection admission adds. The hub runs
// no pods and no protection controllers, so coordination removes them when it is done.
const (
	pvcProtection = "kubernetes.io/pvc-protection"
	pvProtection  = "kubernetes.io/pv-protection"
)

// writes gathers a decision's actions into at most one patch of the claim, one of the PV and
// a deletion of the PV, run in the order the actions first name them.
type writes struct {
	claim                   *corev1.PersistentVolumeClaim
	pv                      *corev1.PersistentVolume
	claimPatch, volumePatch client.Patch
	order                   []func(context.Context, client.Client) error
	kinds                   []string
}

func newWrites(s *scope) *writes {
	w := &writes{claim: s.claim.DeepCopy()}
	if s.volume != nil {
		w.pv = s.volume.DeepCopy()
	}
	return w
}

func (w *writes) onClaim(f func(*corev1.PersistentVolumeClaim)) {
	if w.claimPatch == nil {
		w.claimPatch = client.MergeFromWithOptions(w.claim.DeepCopy(), client.MergeFromWithOptimisticLock{})
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
			metav1.SetMetaDataLabel(&c.ObjectMeta, workloadv1alpha1.StateLabel(key), string(workloadv1alpha1.ResourceStateSync))
		})
	case coordination.DropClaim:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			delete(c.Labels, workloadv1alpha1.StateLabel(key))
			delete(c.Annotations, workloadv1alpha1.DeletionAnnotation(key))
		})
	case coordination.Hold, coordination.Unhold:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) { setHold(c, key, a.Kind == coordination.Hold) })
	case coordination.SetReleasePolicy:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(a.Policy))
		})
	case coordination.BindClaim:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) { c.Spec.VolumeName = w.pv.Name })
		w.onVolume(func(pv *corev1.PersistentVolume) {
			pv.Spec.ClaimRef = &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim",
				Namespace: w.claim.Namespace, Name: w.claim.Name, UID: w.claim.UID}
		})
	case coordination.SyncVolume:
		w.onVolume(func(pv *corev1.PersistentVolume) {
			metav1.SetMetaDataLabel(&pv.ObjectMeta, workloadv1alpha1.StateLabel(key), string(workloadv1alpha1.ResourceStateSync))
			delete(pv.Annotations, workloadv1alpha1.DeletionAnnotation(key))
		})
	case coordination.RemoveVolume:
		w.onVolume(func(pv *corev1.PersistentVolume) {
			metav1.SetMetaDataAnnotation(&pv.ObjectMeta, workloadv1alpha1.DeletionAnnotation(key), workloadv1alpha1.DeletionRequested(time.Now()))
		})
	case coordination.DeleteVolume:
		w.order = append(w.order, func(ctx context.Context, c client.Client) error {
			if w.pv.DeletionTimestamp.IsZero() {
				if err := c.Delete(ctx, w.pv, client.Preconditions{UID: &w.pv.UID}); err != nil {
					return client.IgnoreNotFound(err)
				}
			}
			return unprotect(ctx, c, w.pv, pvProtection)
		})
	case coordination.Finish:
		w.onClaim(func(c *corev1.PersistentVolumeClaim) {
			controllerutil.RemoveFinalizer(c, storagev1alpha1.VolumeFinalizer)
			controllerutil.RemoveFinalizer(c, pvcProtection)
		})
	}
}

// unprotect drops the protection finalizer a hub API server put on an object being deleted:
// it waits for a controller the hub does not run. It reads the object afresh, since the
// deletion just changed it.
func unprotect(ctx context.Context, c client.Client, obj client.Object, finalizer string) error {
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(obj, finalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, finalizer)
	return client.IgnoreNotFound(c.Patch(ctx, obj, patch))
}

// ensureDomain keeps the claim's storage domain annotation, which the scheduler reads to
// move the namespace only to targets that reach the volume.
func (w *writes) ensureDomain(d coordination.Decision) {
	if w.pv == nil || d.Domain == "" || !w.claim.DeletionTimestamp.IsZero() ||
		w.claim.Annotations[schedulingv1alpha1.VolumeDomainAnnotation] == d.Domain {
		return
	}
	w.kinds = append(w.kinds, "Domain("+d.Domain+")")
	w.onClaim(func(c *corev1.PersistentVolumeClaim) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, schedulingv1alpha1.VolumeDomainAnnotation, d.Domain)
	})
}

func (w *writes) describe() string { return strings.Join(w.kinds, ", ") }

// setHold adds the coordinator's hold to, or removes it from, the claim's coordination
// finalizers for the target.
func setHold(c *corev1.PersistentVolumeClaim, key string, held bool) {
	ann := workloadv1alpha1.FinalizersAnnotation(key)
	list := slices.DeleteFunc(holds(c, key), func(f string) bool { return f == storagev1alpha1.HoldFinalizer })
	if held {
		list = append(list, storagev1alpha1.HoldFinalizer)
	}
	if len(list) == 0 {
		delete(c.Annotations, ann)
		return
	}
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, ann, strings.Join(list, ","))
}
