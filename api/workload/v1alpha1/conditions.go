package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsReady tells whether the target's Ready condition is True: its syncer heartbeats.
func (t *SyncTarget) IsReady() bool {
	return meta.IsStatusConditionTrue(t.Status.Conditions, ConditionReady)
}

// UnreachableSince is when the target's heartbeat stopped: the time its Ready condition
// turned False as Unreachable. It is zero while the target is Ready, and for a target that
// never heartbeat.
func (t *SyncTarget) UnreachableSince() time.Time {
	return t.readySince(metav1.ConditionFalse, ReasonUnreachable)
}

// ReadySince is when the target's Ready condition last turned True; zero while it is not
// True.
func (t *SyncTarget) ReadySince() time.Time { return t.readySince(metav1.ConditionTrue, "") }

// readySince is when the Ready condition turned to status, with reason unless that is "";
// zero while it stands otherwise.
func (t *SyncTarget) readySince(status metav1.ConditionStatus, reason string) time.Time {
	c := meta.FindStatusCondition(t.Status.Conditions, ConditionReady)
	if c == nil || c.Status != status || (reason != "" && c.Reason != reason) {
		return time.Time{}
	}
	return c.LastTransitionTime.Time
}

// Departing tells whether every namespace leaves the target: it evicts, or is being deleted.
func (t *SyncTarget) Departing() bool {
	return t.Spec.Evict || !t.DeletionTimestamp.IsZero()
}

// IsFenced tells whether a Fence holds the target: its Fenced condition is True, from the
// Fence's success until it is lifted.
func (t *SyncTarget) IsFenced() bool {
	return meta.IsStatusConditionTrue(t.Status.Conditions, ConditionFenced)
}

// Available tells whether the target may take work: Ready, not cordoned, not departing,
// not fenced.
func (t *SyncTarget) Available() bool {
	return t.IsReady() && !t.Spec.Unschedulable && !t.Departing() && !t.IsFenced()
}

// Reported tells whether the target's syncer has reported the member: its first report
// names the resource types it syncs, of which there is always at least one, beside the
// member's StorageClasses, of which there may be none.
func (t *SyncTarget) Reported() bool {
	return len(t.Status.SyncedResources) > 0
}

// IsClean tells whether the target's syncer reported that it holds nothing in the storage
// domain that the hub no longer gives it.
func (t *SyncTarget) IsClean(domain string) bool {
	return meta.IsStatusConditionTrue(t.Status.Conditions, CleanCondition(domain))
}

// Condition types of a SyncTarget.
const (
	// ConditionReady is True while the member's syncer renews its heartbeat Lease.
	ConditionReady = "Ready"
	// ConditionFenced is True while a Fence cuts the target off a storage domain; the target
	// takes no work meanwhile.
	ConditionFenced = "Fenced"
	// ConditionNodeCIDRsExclusive is True while no node CIDR of the target overlaps one of
	// another target that shares a storage domain with it: a Fence of either would cut off
	// the other too. False names both targets and the CIDRs. Only targets with spec.fencing
	// have it.
	ConditionNodeCIDRsExclusive = "NodeCIDRsExclusive"
	// ConditionFencingVerified is True while the target's node CIDRs fence exactly the
	// clients its member's storage reports of it (csi-addons' GetFenceClients, which the
	// syncer reports in status.fenceClients): every node CIDR matches a client, and every
	// client lies within the node CIDRs. False names the CIDRs and clients that do not; the
	// automatic failover of the target's owned volumes then waits, with reason
	// FencingUnverified, until an admin corrects spec.fencing or fences the member by hand.
	// Unknown while the storage reports no clients. Only targets with spec.fencing have it.
	ConditionFencingVerified = "FencingVerified"
)

// Reasons of a SyncTarget's FencingVerified condition.
const (
	// ReasonNodeCIDRsMatchClients: every node CIDR matches a client the storage reports of the
	// member, and every such client lies within the node CIDRs.
	ReasonNodeCIDRsMatchClients = "NodeCIDRsMatchClients"
	// ReasonUncoveredClients: a client the storage reports of the member has addresses outside
	// every node CIDR: a Fence would leave it reaching the storage.
	ReasonUncoveredClients = "UncoveredClients"
	// ReasonUnmatchedNodeCIDRs: a node CIDR matches no client the storage reports of the
	// member: it is mistyped, or names nodes the storage does not see.
	ReasonUnmatchedNodeCIDRs = "UnmatchedNodeCIDRs"
	// ReasonFenceClientsUnreported: the member's storage reports no clients (no CSIAddonsNode
	// reports the class, or its driver cannot list them): nothing to verify against, and
	// nothing waits on it.
	ReasonFenceClientsUnreported = "FenceClientsUnreported"
)

// Reasons of a SyncTarget's NodeCIDRsExclusive condition.
const (
	// ReasonNodeCIDRsExclusive: no other target of the target's storage domains has an
	// address in its node CIDRs.
	ReasonNodeCIDRsExclusive = "NodeCIDRsExclusive"
	// ReasonNodeCIDRsOverlap: a node CIDR overlaps one of another target of a storage domain
	// of the target.
	ReasonNodeCIDRsOverlap = "NodeCIDRsOverlap"
)

// CleanCondition is the condition type a target's syncer reports, per storage domain, True
// while its member holds no volume of the domain that the hub no longer gives the target.
func CleanCondition(domain string) string { return "Clean-" + domain }

// Reasons of a SyncTarget's Ready condition.
const (
	// ReasonHeartbeating: the heartbeat Lease was renewed within the grace period.
	ReasonHeartbeating = "Heartbeating"
	// ReasonUnreachable: the heartbeat Lease was not renewed within the grace period.
	ReasonUnreachable = "Unreachable"
	// ReasonNeverSeen: no syncer ever renewed a heartbeat for the target.
	ReasonNeverSeen = "NeverSeen"
)

// ReasonDownstreamConflict is the reason of the event on a hub object that a target's syncer
// does not sync: the member has an object of the same name that the syncer did not create.
const ReasonDownstreamConflict = "DownstreamConflict"
