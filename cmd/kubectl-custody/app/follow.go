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
	return o.follow(ctx, "locationpair/"+name, "kubectl custody history "+name, timeout, func() (string, string, error) {
		p := &schedulingv1alpha1.LocationPair{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
			return "", "", err
		}
		a := p.Status.LastAction
		if a != nil && a.Generation >= generation && a.Over() {
			return "", a.Summary(), nil
		}
		return switchProgress(p, a, generation), "", nil
	})
}

// follow calls read every switchPoll until it returns a last word, or timeout passed (0: no
// limit), saying on the error stream how long it has followed what and its progress whenever
// that changes, and at the end the last word on the output; then names the command that
// follows it further. A read that fails ends it.
func (o *options) follow(ctx context.Context, what, further string, timeout time.Duration, read func() (progress, last string, err error)) error {
	start := time.Now()
	said := ""
	for {
		progress, last, err := read()
		if err != nil {
			return fmt.Errorf("%s: %s", what, o.explain(err))
		}
		if last != "" {
			fmt.Fprintf(o.streams.Out, "%s: %s\n", what, last)
			return nil
		}
		if progress != said {
			fmt.Fprintf(o.streams.ErrOut, "[%s] %s\n", time.Since(start).Round(time.Second), progress)
			said = progress
		}
		if timeout > 0 && time.Since(start) >= timeout {
			return fmt.Errorf("%s: still %s after %s; %s follows it", what, said, timeout, further)
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
