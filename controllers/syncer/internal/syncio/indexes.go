package syncio

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Field indexes of the syncer's caches, for lookups that would otherwise scan every PV on
// each event.
const (
	// MemberPVIndex indexes hub PVs by the name of the member PV of the target they were
	// upsynced from.
	MemberPVIndex = "custody.memberPV"
	// ClaimIndex indexes hub PVs by the namespace/name of the claim their claimRef names.
	ClaimIndex = "custody.claim"
	// HubPVIndex indexes member PVs by the name of the hub PV they stand for.
	HubPVIndex = "custody.hubPV"
)

// Index registers the syncer's field indexes on the hub's and the member's caches.
func Index(ctx context.Context, t transform.Target, hub, member client.FieldIndexer) error {
	if err := hub.IndexField(ctx, transform.Empty(transform.PVGVK), MemberPVIndex, func(o client.Object) []string {
		return nonEmpty(o.GetAnnotations()[workloadv1alpha1.PVNameAnnotation(t.Key)])
	}); err != nil {
		return err
	}
	if err := hub.IndexField(ctx, transform.Empty(transform.PVGVK), ClaimIndex, func(o client.Object) []string {
		if key, ok := transform.ClaimOf(o.(*unstructured.Unstructured)); ok {
			return []string{key.String()}
		}
		return nil
	}); err != nil {
		return err
	}
	return member.IndexField(ctx, transform.Empty(transform.PVGVK), HubPVIndex, func(o client.Object) []string {
		return nonEmpty(o.GetAnnotations()[transform.HubNameAnnotation])
	})
}

func nonEmpty(v string) []string {
	if v == "" {
		return nil
	}
	return []string{v}
}
