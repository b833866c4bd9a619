package upsync

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/protection"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// provisioned returns the hub claim and the member PV to upsync for it: the hub claim is
// synced to the target, its downstream copy (created by the syncer) is Bound, and the PV it
// is bound to was not made by the syncer. Both are nil when there is nothing to upsync.
func (r *Reconciler) provisioned(ctx context.Context, key types.NamespacedName) (*unstructured.Unstructured, *corev1.PersistentVolume, error) {
	claim := transform.Empty(transform.PVCGVK)
	if err := r.Hub.Get(ctx, key, claim); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if state, _ := r.Target.State(claim); state != workloadv1alpha1.ResourceStateSync {
		return nil, nil, nil
	}
	down := transform.Empty(transform.PVCGVK)
	if err := r.Member.Get(ctx, types.NamespacedName{Namespace: r.Target.Namespace(key.Namespace), Name: key.Name}, down); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	phase, _, _ := unstructured.NestedString(down.Object, "status", "phase")
	volumeName, _, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
	if !r.Target.Owns(down) || phase != string(corev1.ClaimBound) || volumeName == "" {
		return nil, nil, nil
	}
	memberPV := transform.Empty(transform.PVGVK)
	if err := r.Member.Get(ctx, client.ObjectKey{Name: volumeName}, memberPV); err != nil {
		return nil, nil, client.IgnoreNotFound(err)
	}
	if r.Target.Owns(memberPV) {
		return nil, nil, nil
	}
	pv := &corev1.PersistentVolume{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(memberPV.Object, pv); err != nil {
		return nil, nil, err
	}
	if pv.Spec.ClaimRef == nil || pv.Spec.ClaimRef.UID != down.GetUID() {
		return nil, nil, nil
	}
	return claim, pv, nil
}

// ensureHubPV creates the hub PV, or keeps it in line with the member's while it is labelled
// Upsync for the target. Labels and annotations others put on it stay.
func (r *Reconciler) ensureHubPV(ctx context.Context, want *corev1.PersistentVolume) error {
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
		return r.ensureHubStatus(ctx, created, want.Status)
	}
	if state, _ := r.Target.State(cur); state != workloadv1alpha1.ResourceStateUpsync {
		log.V(1).Info("Hub PV no longer upsynced from the target", "state", state)
		return nil
	}
	next := cur.DeepCopy()
	next.Labels = merged(next.Labels, want.Labels)
	next.Annotations = merged(next.Annotations, want.Annotations)
	next.Spec = want.Spec
	if !equality.Semantic.DeepEqual(cur.ObjectMeta, next.ObjectMeta) || !equality.Semantic.DeepEqual(cur.Spec, next.Spec) {
		if err := r.Hub.Update(ctx, next); err != nil {
			return err
		}
		log.Info("Updated upsynced volume")
	}
	return r.ensureHubStatus(ctx, next, want.Status)
}

// ensureHubStatus sets the hub PV's status to the member PV's.
func (r *Reconciler) ensureHubStatus(ctx context.Context, pv *corev1.PersistentVolume, want corev1.PersistentVolumeStatus) error {
	if equality.Semantic.DeepEqual(pv.Status, want) {
		return nil
	}
	return status.Apply(ctx, r.Hub, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv.Name}, Status: want}, transform.FieldManager)
}

// hubPV reads a hub PV from the cache, else directly, as one not labelled for the target is
// not cached; nil when it does not exist.
func (r *Reconciler) hubPV(ctx context.Context, name string) (*corev1.PersistentVolume, error) {
	obj := transform.Empty(transform.PVGVK)
	err := r.Hub.Get(ctx, client.ObjectKey{Name: name}, obj)
	if apierrors.IsNotFound(err) {
		err = r.HubReader.Get(ctx, client.ObjectKey{Name: name}, obj)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	pv := &corev1.PersistentVolume{}
	return pv, runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, pv)
}

// pruneUpsynced deletes the hub PVs upsynced for the hub claim key while their member PV no
// longer exists: in the Upsync state the member is the source, and a hub record of a PV it
// no longer has would hand a dead volume to the next target.
func (r *Reconciler) pruneUpsynced(ctx context.Context, key types.NamespacedName) error {
	hubPVs := transform.EmptyList(transform.PVGVK)
	if err := r.Hub.List(ctx, hubPVs, client.MatchingFields{transform.ClaimIndex: key.String()},
		client.MatchingLabels{r.Target.StateLabel(): string(workloadv1alpha1.ResourceStateUpsync)}); err != nil {
		return err
	}
	for i := range hubPVs.Items {
		hubPV := &hubPVs.Items[i]
		memberName := hubPV.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(r.Target.Key)]
		if memberName == "" {
			continue
		}
		err := r.Member.Get(ctx, client.ObjectKey{Name: memberName}, transform.Empty(transform.PVGVK))
		if apierrors.IsNotFound(err) {
			err = r.MemberReader.Get(ctx, client.ObjectKey{Name: memberName}, transform.Empty(transform.PVGVK))
		}
		if !apierrors.IsNotFound(err) {
			if err != nil {
				return err
			}
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
