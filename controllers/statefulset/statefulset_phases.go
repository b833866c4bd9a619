package statefulset

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// alive reads the set past the cache and tells whether it still lives. A user who deletes a
// set and then its claims must not see them made again from a cache that has not yet seen the
// set's deletion.
func (r *Reconciler) alive(ctx context.Context, set *appsv1.StatefulSet) (bool, error) {
	live := &appsv1.StatefulSet{}
	switch err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(set), live); {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, err
	}
	return live.UID == set.UID && live.DeletionTimestamp.IsZero(), nil
}

// ensureClaims creates the claims of ordinals in range that do not exist. A claim the hub
// refuses is reported on the set and not retried: only a change of the set can mend it.
func (r *Reconciler) ensureClaims(ctx context.Context, set *appsv1.StatefulSet, p plan) error {
	if len(p.create) == 0 {
		return nil
	}
	if alive, err := r.alive(ctx, set); err != nil || !alive {
		return err
	}
	for _, c := range p.create {
		err := r.Client.Create(ctx, c)
		switch {
		case apierrors.IsAlreadyExists(err):
			// Made meanwhile, by a syncer adopting a member's claim: its event brings the set back.
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			r.Recorder.Eventf(set, nil, corev1.EventTypeWarning, storagev1alpha1.ReasonClaimRefused, "CreateClaim",
				"the hub refused claim %s of the set's volumeClaimTemplates: %v", c.Name, err)
		case err != nil:
			return fmt.Errorf("creating claim %s: %w", c.Name, err)
		default:
			ctrl.LoggerFrom(ctx).Info("Created claim of StatefulSet", "claim", klog.KObj(c))
			r.Recorder.Eventf(set, c, corev1.EventTypeNormal, storagev1alpha1.ReasonClaimCreated, "CreateClaim", "created claim %s", c.Name)
		}
	}
	return nil
}

// ensureOwnership marks the existing claims of ordinals in range as the set's and gives them
// the owner references of its retention policy.
func (r *Reconciler) ensureOwnership(ctx context.Context, _ *appsv1.StatefulSet, p plan) error {
	for _, want := range p.update {
		patch := client.MergeFromWithOptions(p.inRange[want.Name], client.MergeFromWithOptimisticLock{})
		if err := r.Client.Patch(ctx, want, patch); err != nil {
			return client.IgnoreNotFound(fmt.Errorf("claiming %s for the StatefulSet: %w", want.Name, err))
		}
		ctrl.LoggerFrom(ctx).Info("Claim follows its StatefulSet's retention policy", "claim", klog.KObj(want), "owners", len(want.OwnerReferences))
	}
	return nil
}

// removeScaledDown deletes the set's claims of ordinals it no longer has, when whenScaled is
// Delete. Coordination then releases their volumes, once the members let go of them.
func (r *Reconciler) removeScaledDown(ctx context.Context, set *appsv1.StatefulSet, p plan) error {
	for _, c := range p.remove {
		uid := c.UID
		if err := r.Client.Delete(ctx, c, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting scaled-down claim %s: %w", c.Name, err)
		}
		ctrl.LoggerFrom(ctx).Info("Deleted claim of a scaled-down ordinal", "claim", klog.KObj(c))
		r.Recorder.Eventf(set, c, corev1.EventTypeNormal, storagev1alpha1.ReasonClaimDeleted, "DeleteClaim",
			"deleted claim %s: the set scaled down and its whenScaled is Delete", c.Name)
	}
	return nil
}

// ensurePlacement syncs the set to the targets where its claims are, and drops the empty
// state of the targets it leaves before it was synced there.
func (r *Reconciler) ensurePlacement(ctx context.Context, set *appsv1.StatefulSet, p plan) error {
	ready, drop := placement(set, p)
	if len(ready)+len(drop) == 0 {
		return nil
	}
	patch := client.MergeFromWithOptions(set.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for _, key := range ready {
		workloadv1alpha1.SetState(set, key, workloadv1alpha1.ResourceStateSync)
	}
	for _, key := range drop {
		workloadv1alpha1.Release(set, key)
	}
	if err := r.Client.Patch(ctx, set, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Placed StatefulSet where its claims are", "sync", ready, "dropped", drop)
	return nil
}
