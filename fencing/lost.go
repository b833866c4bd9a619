package fencing

import (
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// DefaultHeartbeatPeriod is the renewal period assumed for a heartbeat Lease that announces
// none.
const DefaultHeartbeatPeriod = 10 * time.Second

// Grace is how long the target of the heartbeat Lease (nil: none) may go unrenewed before
// it is Unreachable: configured when set, else three renewal periods the Lease announces.
func Grace(configured time.Duration, lease *coordinationv1.Lease) time.Duration {
	if configured > 0 {
		return configured
	}
	if lease != nil && lease.Spec.LeaseDurationSeconds != nil && *lease.Spec.LeaseDurationSeconds > 0 {
		return 3 * time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	}
	return 3 * DefaultHeartbeatPeriod
}

// Delay is how long the target may be Unreachable before it is lost: its owned volumes then
// wait for a Fence of it instead of its acknowledgement, and its namespaces leave it. It is
// the target's own spec.fenceDelay, else the controller's (configured), else three of its
// graces (the configured grace, or the one its Lease, nil when there is none, announces).
func Delay(t *workloadv1alpha1.SyncTarget, configured, grace time.Duration, lease *coordinationv1.Lease) time.Duration {
	switch {
	case t.Spec.FenceDelay != nil:
		return t.Spec.FenceDelay.Duration
	case configured > 0:
		return configured
	}
	return 3 * Grace(grace, lease)
}

// Lost tells whether a target Unreachable since since has been so for at least delay at now.
// A zero since means the target is reachable.
func Lost(since, now time.Time, delay time.Duration) bool {
	return !since.IsZero() && now.Sub(since) >= delay
}

// LostIn is how long until a target Unreachable since since is lost, at now: zero when it
// is reachable (a zero since) or lost already. Only time tells that it is lost, so a decision
// that waits for it is taken again then.
func LostIn(since, now time.Time, delay time.Duration) time.Duration {
	if since.IsZero() {
		return 0
	}
	return max(0, since.Add(delay).Sub(now))
}

// Brake holds back automatic fencing and failover while many of the hub's targets are
// Unreachable at once: a split of the hub's own network looks like that, and fencing every
// member it cuts off would stop what still runs. A Fence an admin asks for, and a declared
// failover, still go ahead. The thresholds are Karmada's (--unhealthy-cluster-threshold,
// --large-cluster-num-threshold), but not their use: below MinTargets Custody does not
// brake at all, as losing one member of a two-member domain, or one Location of a pair, is
// the case it fails over for.
type Brake struct {
	// Share: more than this share of the targets Unreachable at once engages the brake;
	// zero never does.
	Share float64
	// MinTargets: the brake counts only on a hub of at least this many targets. On fewer,
	// losing one member of a two-member domain, or a Location of a pair, is the normal case.
	MinTargets int
}

// DefaultBrake brakes at more than 55% of at least 10 targets.
var DefaultBrake = Brake{Share: 0.55, MinTargets: 10}

// Engaged tells whether unreachable of total targets engage the brake.
func (b Brake) Engaged(unreachable, total int) bool {
	return b.Share > 0 && total >= b.MinTargets && float64(unreachable) > b.Share*float64(total)
}
