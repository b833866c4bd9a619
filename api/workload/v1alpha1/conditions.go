package v1alpha1

import "k8s.io/apimachinery/pkg/api/meta"

// IsReady tells whether the target's Ready condition is True: its syncer heartbeats.
func (t *SyncTarget) IsReady() bool {
	return meta.IsStatusConditionTrue(t.Status.Conditions, ConditionReady)
}

// Condition types of a SyncTarget.
const (
	// ConditionReady is True while the member's syncer renews its heartbeat Lease.
	ConditionReady = "Ready"
)

// Reasons of a SyncTarget's Ready condition.
const (
	// ReasonHeartbeating: the heartbeat Lease was renewed within the grace period.
	ReasonHeartbeating = "Heartbeating"
	// ReasonUnreachable: the heartbeat Lease was not renewed within the grace period.
	ReasonUnreachable = "Unreachable"
	// ReasonNeverSeen: no syncer ever renewed a heartbeat for the target.
	ReasonNeverSeen = "NeverSeen"
)
