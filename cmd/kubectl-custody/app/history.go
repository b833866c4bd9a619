package app

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func (o *options) historyCommand() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "history PAIR",
		Short: "Show a LocationPair's past failovers and relocates, and what each cost",
		Long: fmt.Sprintf(`Show the switches of a LocationPair that ended, newest first, the last %d of them (the
pair's status.history), and the one under way: when it started, what triggered it (the
active Location lost, or declared), how it ended (Completed, or CalledOff for a failover
whose Location answered again before it was fenced), the recovery time measured (from the
loss detected or the switch declared to every volume with a replica bound again), the
recovery point (the longest stretch of writes a volume lost: zero for a relocate), and the
volumes restored, set aside (their storage kept at the Location left) and left waiting for
want of a replica. -o wide adds each step's time from the start, how long after it
completed the pair protected again (the Location left back, unfenced, and synced once), how
long after the Location left could take replicas again (a target of it Ready, clean and
unfenced) it protected again, and the longest of the syncs that took.`, schedulingv1alpha1.HistoryLength),
		Example: `  # The switches of the pair shop, with their steps
  kubectl custody history shop -o wide`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				p := &schedulingv1alpha1.LocationPair{}
				if err := h.Get(ctx, client.ObjectKey{Name: args[0]}, p); err != nil {
					return listing{}, notFound(err, "locationpair", args[0])
				}
				return listing{list: &schedulingv1alpha1.LocationPairList{Items: []schedulingv1alpha1.LocationPair{*p}}, table: historyTable(p)}, nil
			})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

var historyColumns = columns(
	[]string{"Started", "Mode", "From", "To", "Trigger", "Result", "Recovery Time", "Recovery Point", "Restored", "Set Aside", "Waiting"},
	"Steps", "Protected Again", "After Return", "Return Sync")

// historyTable is the table of the pair's switches, newest first: the one under way, then
// those of its history.
func historyTable(p *schedulingv1alpha1.LocationPair) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: historyColumns}
	actions := []schedulingv1alpha1.PairAction{}
	if a := p.Status.LastAction; a != nil && !a.Over() {
		actions = append(actions, *a)
	}
	for i := len(p.Status.History) - 1; i >= 0; i-- {
		actions = append(actions, p.Status.History[i])
	}
	for i := range actions {
		a := &actions[i]
		t.Rows = append(t.Rows, row(p,
			a.StartTime.UTC().Format(time.RFC3339), string(a.Mode), a.From, a.To, orNone(a.Trigger), orNone(a.Progression),
			seconds(a.RecoveryTime), seconds(a.RecoveryPoint), count(a, a.Restored), count(a, a.SetAside), count(a, a.Waiting), steps(a), seconds(a.ProtectedAgain),
			seconds(a.ProtectedAfterReturn()), seconds(a.ReturnSync)))
	}
	return t
}

// seconds is a measured duration, or <none> while it is not measured.
func seconds(d *metav1.Duration) string {
	if d == nil {
		return "<none>"
	}
	return d.Round(time.Second).String()
}

// count is a count of volumes of a completed switch, or <none> for one that is not.
func count(a *schedulingv1alpha1.PairAction, n int32) string {
	if a.Progression != schedulingv1alpha1.ProgressionCompleted {
		return "<none>"
	}
	return fmt.Sprint(n)
}

// steps are the switch's steps, each with its time from the start.
func steps(a *schedulingv1alpha1.PairAction) string {
	var out []string
	for _, s := range a.Steps {
		out = append(out, fmt.Sprintf("%s+%s", s.Progression, s.Time.Sub(a.StartTime.Time).Round(time.Second)))
	}
	return joined(out)
}
