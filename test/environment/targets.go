package environment

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// PatchTarget changes the spec of the SyncTarget name on the hub c.
func PatchTarget(ctx context.Context, c client.Client, name string, change func(*workloadv1alpha1.SyncTargetSpec)) error {
	t := &workloadv1alpha1.SyncTarget{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, t); err != nil {
		return err
	}
	patch := client.MergeFrom(t.DeepCopy())
	change(&t.Spec)
	return c.Patch(ctx, t, patch)
}

// Cordon makes the SyncTarget name unschedulable, or schedulable again.
func Cordon(ctx context.Context, c client.Client, name string, cordoned bool) error {
	return PatchTarget(ctx, c, name, func(s *workloadv1alpha1.SyncTargetSpec) { s.Unschedulable = cordoned })
}
