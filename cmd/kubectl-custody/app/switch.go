package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// switchCommand is failover or relocate: it declares the other Location of a pair active,
// carried out in mode.
func (o *options) switchCommand(mode schedulingv1alpha1.SwitchMode) *cobra.Command {
	var yes, wait bool
	var timeout time.Duration
	verb, short, long := "relocate", "Move a LocationPair's workloads to its other Location, losing nothing",
		`Declare the other Location of a LocationPair active, as a relocate: the pair's workloads stop
at the active Location, a last sync of every volume runs, and once its snapshots are ready
the workloads run at the other Location, each volume restored from its last sync. Nothing
that was written is lost. The workloads are down from the stop to the restore. Replication
then runs the other way.`
	if mode == schedulingv1alpha1.Failover {
		verb, short, long = "failover", "Fail a LocationPair over to its other Location, now, from the replicas it has",
			`Declare the other Location of a LocationPair active, as a failover: the active Location's
targets that still answer are fenced off their storage, and the workloads run at the other
Location, each volume restored from its latest replica. What was written since that replica
is lost (the pair's OLDEST REPLICA says how much at most). A pair fails over by itself when
every target of its active Location has been unreachable for its failover threshold; this
command is for an admin who knows the Location is lost sooner, or wants to leave it at once.
When the old Location is back, it removes its copies, is unfenced, and replication runs the
other way. A relocate that waits for its Location to stop its workloads or sync a last time
(the Location stopped answering) is turned into a failover to the same Location.`
	}
	cmd := &cobra.Command{
		Use:   verb + " PAIR [--yes] [--wait=false]",
		Short: short,
		Long: long + `

The command sets the pair's spec.activeLocation and spec.switchMode, after asking for
confirmation unless --yes is given, then follows the switch until it ends, as kubectl
rollout status does: the step it is at and what it waits for (N volumes to be restored)
whenever that changes, then what it cost (kubectl custody history PAIR keeps it).
--wait=false returns once the switch is asked.`,
		Example: fmt.Sprintf("  kubectl custody %s shop\n  kubectl custody %s shop --yes --wait=false", verb, verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, generation, err := o.switchPair(cmd.Context(), args[0], mode, yes)
			if err != nil || !wait {
				return err
			}
			return o.followSwitch(cmd.Context(), h, args[0], generation, timeout)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "Do not ask for confirmation.")
	cmd.Flags().BoolVar(&wait, "wait", true, "Follow the switch until it ends.")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "How long to follow the switch; 0 follows it until it ends.")
	return cmd
}

// switchPair asks for the switch of the pair, after confirmation unless yes, and returns the
// hub and the spec generation that asks for it.
func (o *options) switchPair(ctx context.Context, name string, mode schedulingv1alpha1.SwitchMode, yes bool) (*hub, int64, error) {
	h, err := o.hub()
	if err != nil {
		return nil, 0, err
	}
	p := &schedulingv1alpha1.LocationPair{}
	if err := h.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		return nil, 0, notFound(err, "locationpair", name)
	}
	to, question, err := switchPlan(p, mode, time.Now())
	if err != nil {
		return nil, 0, err
	}
	if !yes {
		if err := o.confirm(question, "locationpair/"+name+" is unchanged"); err != nil {
			return nil, 0, err
		}
	}
	// The question was asked of the pair as read: a pair that changed meanwhile (its status
	// is written often) is read again, and switched only if the switch still goes to the same
	// Location.
	reread := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if reread {
			if err := h.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
				return err
			}
			now, _, err := switchPlan(p, mode, time.Now())
			if err != nil {
				return err
			}
			if now != to {
				return fmt.Errorf("the pair changed since the question: a %s now goes to %s, not %s", strings.ToLower(string(mode)), now, to)
			}
		}
		reread = true
		patch := client.MergeFromWithOptions(p.DeepCopy(), client.MergeFromWithOptimisticLock{})
		p.Spec.ActiveLocation, p.Spec.SwitchMode = to, mode
		return h.Patch(ctx, p, patch)
	})
	if err != nil {
		return nil, 0, fmt.Errorf("locationpair/%s: %s", name, o.explain(err))
	}
	fmt.Fprintf(o.streams.Out, "locationpair/%s: %s to %s asked; kubectl custody describe pair %s follows it\n", name, strings.ToLower(string(mode)), to, name)
	return h, p.Generation, nil
}

// switchPlan is the Location a switch of p makes active and the question that confirms it,
// or why there can be no switch now.
func switchPlan(p *schedulingv1alpha1.LocationPair, mode schedulingv1alpha1.SwitchMode, now time.Time) (string, string, error) {
	from, to := p.Status.ActiveLocation, p.Spec.Primary
	if from == p.Spec.Primary {
		to = p.Spec.Secondary
	}
	if a := p.Status.LastAction; a != nil && !a.Over() {
		waits := a.Mode == schedulingv1alpha1.Relocate && (a.Progression == schedulingv1alpha1.ProgressionQuiescing || a.Progression == schedulingv1alpha1.ProgressionFinalSync)
		if mode != schedulingv1alpha1.Failover || !waits {
			return "", "", fmt.Errorf("locationpair/%s is in a %s from %s to %s (%s): wait until it completes", p.Name,
				strings.ToLower(string(a.Mode)), a.From, a.To, a.Progression)
		}
		// A relocate that cannot go on (its Location stopped answering) is turned into a
		// failover to the same Location.
		from, to = a.From, a.To
	}
	if from == "" {
		return "", "", fmt.Errorf("locationpair/%s has no active Location yet: the hub has not taken it up", p.Name)
	}
	if mode == schedulingv1alpha1.Relocate {
		return to, fmt.Sprintf("Relocate locationpair/%s from %s to %s? Its workloads stop at %s until a last sync of its volumes (%d) is ready, then run at %s.",
			p.Name, from, to, from, p.Status.Volumes, to), nil
	}
	loss := "none of them has a replica yet: their claims wait at " + to + " until " + from + " is back"
	switch t := p.Status.OldestLastSyncTime; {
	case p.Status.Volumes == 0:
		loss = "there is nothing to restore"
	case t != nil:
		loss = fmt.Sprintf("what was written in the last %s at most is lost", age(t, now))
	}
	return to, fmt.Sprintf("Fail locationpair/%s over from %s to %s? Its volumes (%d) come back from their replicas: %s.",
		p.Name, from, to, p.Status.Volumes, loss), nil
}
