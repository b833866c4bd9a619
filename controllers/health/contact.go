package health

import (
	"context"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/reconnect"
)

// DefaultContactInterval is how often the controller asks the hub's API server whether it
// answers.
const DefaultContactInterval = time.Second

// contact is the controller's own reach of the hub's API server. A syncer cannot renew its
// Lease while the hub does not answer, so a heartbeat missed then says nothing of the
// target: the grace runs again from the moment the hub answers again.
type contact struct {
	mu sync.Mutex
	// asked: the hub was asked at least once.
	asked bool
	// since is when the current stretch of answers began; zero while the hub does not answer.
	since time.Time
}

// Since is when the hub's API server began to answer without a break, zero while it does
// not answer; asked is false until it was first asked.
func (c *contact) Since() (since time.Time, asked bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since, c.asked
}

// observe records one answer (or its absence) at now, and tells whether the reach changed.
func (c *contact) observe(answered bool, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := !c.asked
	c.asked = true
	switch {
	case answered && c.since.IsZero():
		c.since = now
		return true
	case !answered && !c.since.IsZero():
		c.since = time.Time{}
		return true
	}
	return first
}

// contactTimeout bounds one question to the hub: a hub that takes longer does not answer.
const contactTimeout = 5 * time.Second

// watch asks the hub's API server every interval, past any cache, for at most one heartbeat
// Lease, until ctx ends. The hub does not answer when it cannot be reached or is not ready
// (as reconnect.Unreachable tells), or when it refuses the request for a short while after
// it starts; any other error is an answer, though a wrong one, and is logged.
func (c *contact) watch(ctx context.Context, r client.Reader, interval time.Duration) error {
	log := ctrl.LoggerFrom(ctx).WithName("hub-contact")
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var refusedSince time.Time
	for {
		askCtx, cancel := context.WithTimeout(ctx, contactTimeout)
		err := r.List(askCtx, &coordinationv1.LeaseList{}, client.InNamespace(workloadv1alpha1.HeartbeatNamespace), client.Limit(1))
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		refusedSince = refusal(err, refusedSince, time.Now())
		silent := reconnect.Unreachable(err) || !refusedSince.IsZero() && time.Since(refusedSince) < refusalWindow
		switch changed := c.observe(!silent, time.Now()); {
		case changed && silent:
			log.Info("The hub's API server does not answer; no Ready target turns Unreachable until it does and the grace ran out again", "error", err.Error())
		case changed:
			log.Info("The hub's API server answers")
		}
		if err != nil && !silent {
			log.Error(err, "Asking the hub's API server whether it answers")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// refusalWindow is how long after the hub first refused a request the refusals count as the
// hub not answering: an API server that starts refuses requests until its authorizer caught up.
const refusalWindow = 30 * time.Second

// refusal is since when the hub refuses the requests, given err and since when it refused them
// before; zero when err is no refusal.
func refusal(err error, since, now time.Time) time.Time {
	switch {
	case !reconnect.Refused(err):
		return time.Time{}
	case since.IsZero():
		return now
	}
	return since
}
