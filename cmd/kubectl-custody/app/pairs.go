package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func (o *options) pairsCommand() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "pairs",
		Aliases: []string{"pair", "lp"},
		Short:   "List the LocationPairs: where each runs, whether its data is protected, and how old the oldest replica is",
		Long: `List the LocationPairs, one row per pair: its primary and secondary Location, the active
one, the phase (Protecting, FailingOver, FailedOver, Relocating, Relocated), the volumes
that have a recent replica out of those that replicate, and the age of the oldest volume's
last replica: what a failover now would lose is what was written since. -o wide adds the
replication interval, the DataProtected reason, the last failover or relocate, and what one
under way waits for: the volumes still to be restored, then the workloads not yet ready at the
Location it goes to.`,
		Example: `  # Every pair, with the reason its data is or is not protected
  kubectl custody pairs -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				list := &schedulingv1alpha1.LocationPairList{}
				if err := h.List(ctx, list); err != nil {
					return listing{}, err
				}
				return listing{list: list, table: pairTable(list.Items, time.Now())}, nil
			})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

var pairColumns = columns(
	[]string{"Name", "Primary", "Secondary", "Active", "Phase", "Protected", "Oldest Replica"},
	"Interval", "Reason", "Last Action", "Waiting For")

// pairTable is the table of pairs, their replicas' ages taken at now.
func pairTable(items []schedulingv1alpha1.LocationPair, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: pairColumns}
	for i := range items {
		p, s := &items[i], &items[i].Status
		reason := ""
		if c := meta.FindStatusCondition(s.Conditions, schedulingv1alpha1.ConditionDataProtected); c != nil {
			reason = c.Reason
		}
		action := ""
		if a := s.LastAction; a != nil {
			action = fmt.Sprintf("%s %s→%s %s", a.Mode, a.From, a.To, orNone(a.Progression))
		}
		t.Rows = append(t.Rows, row(p,
			p.Name, p.Spec.Primary, p.Spec.Secondary, orNone(s.ActiveLocation), orNone(string(s.Phase)),
			fmt.Sprintf("%d/%d", s.ProtectedVolumes, s.Volumes), age(s.OldestLastSyncTime, now),
			orNone(p.Spec.ReplicationInterval), orNone(reason), orNone(action), orNone(waitingFor(s))))
	}
	return t
}

// waitingFor is what the failover or relocate under way waits for, as its Progressing
// condition says; empty when none is under way.
func waitingFor(s *schedulingv1alpha1.LocationPairStatus) string {
	c := meta.FindStatusCondition(s.Conditions, schedulingv1alpha1.ConditionProgressing)
	if c == nil || c.Status != metav1.ConditionTrue {
		return ""
	}
	_, what, _ := strings.Cut(c.Message, ": waiting for ")
	return what
}
