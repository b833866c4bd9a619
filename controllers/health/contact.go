package health

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// DefaultContactInterval is how often the controller asks the hub's API server whether it
// answers.
const DefaultContactInterval = time.Second

// contact is the controller's own reach of the hub's API server. A syncer cannot renew its
// Lease while the hub does not answer, so a heartbeat missed then says nothing of the
// target: the grace runs again from the moment the hub answers again.
type contact struct {
	mu sync.Mutex
	// since is when the current stretch of answers began; zero while the hub does not answer,
	// and before it was first asked.
	since time.Time
}

// Since is when the hub's API server began to answer without a break; zero while it does
// not answer.
func (c *contact) Since() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since
}

// observe records one answer (or its absence) at now, and tells whether the reach changed.
func (c *contact) observe(answered bool, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case answered && c.since.IsZero():
		c.since = now
		return true
	case !answered && !c.since.IsZero():
		c.since = time.Time{}
		return true
	}
	return false
}

// watch asks the hub's API server every interval, past any cache, for at most one heartbeat
// Lease, until ctx ends. An answer that takes longer than the interval counts as none.
func (c *contact) watch(ctx context.Context, r client.Reader, interval time.Duration) error {
	log := ctrl.LoggerFrom(ctx).WithName("hub-contact")
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		askCtx, cancel := context.WithTimeout(ctx, interval)
		err := r.List(askCtx, &coordinationv1.LeaseList{}, client.InNamespace(workloadv1alpha1.HeartbeatNamespace), client.Limit(1))
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if c.observe(err == nil, time.Now()) {
			if err != nil {
				log.Info("The hub's API server does not answer; no target turns Unreachable until it does and the grace ran out again", "error", err.Error())
			} else {
				log.Info("The hub's API server answers")
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
