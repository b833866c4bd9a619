package app

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// switchPoll is how often a followed switch is read.
var switchPoll = time.Second

// followSwitch reads the pair called name until the switch that answers its spec generation
// ended, or timeout passed (0: no limit), saying on the error stream the step it is at and
// what it waits for whenever that changes, and at the end what it cost. A read that fails
// ends it.
func (o *options) followSwitch(ctx context.Context, c client.Reader, name string, generation int64, timeout time.Duration) error {
	start := time.Now()
	said := ""
	for {
		p := &schedulingv1alpha1.LocationPair{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			return fmt.Errorf("locationpair/%s: %s", name, o.explain(err))
		}
		a := p.Status.LastAction
		if a != nil && a.Generation >= generation && a.Over() {
			fmt.Fprintf(o.streams.Out, "locationpair/%s: %s\n", name, a.Summary())
			return nil
		}
		if s := switchProgress(p, a, generation); s != said {
			fmt.Fprintf(o.streams.ErrOut, "[%s] %s\n", time.Since(start).Round(time.Second), s)
			said = s
		}
		if timeout > 0 && time.Since(start) >= timeout {
			return fmt.Errorf("locationpair/%s: still %s after %s; kubectl custody history %s follows it", name, said, timeout, name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(switchPoll):
		}
	}
}

// switchProgress says where the switch answering generation stands: its step and the pair's
// Progressing message, or, before it started, why it waits.
func switchProgress(p *schedulingv1alpha1.LocationPair, a *schedulingv1alpha1.PairAction, generation int64) string {
	why := ""
	if c := meta.FindStatusCondition(p.Status.Conditions, schedulingv1alpha1.ConditionProgressing); c != nil {
		why = c.Message
	}
	if a == nil || a.Generation < generation {
		if why == "" {
			return "waiting for the hub to take the switch up"
		}
		return "not started: " + why
	}
	if why == "" {
		return a.Progression
	}
	return a.Progression + ": " + why
}
