package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func (o *options) targetsCommand() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "targets",
		Aliases: []string{"target", "st"},
		Short:   "List the sync targets: key, Locations, readiness, heartbeat and storage domains",
		Long: `List the sync targets with their key, the Locations whose instance selector matches them,
readiness, last heartbeat and storage domains. READY is the Ready condition, followed by
Cordoned when the target is unschedulable and Evicting when it evicts its namespaces.`,
		Example: `  # Every target, with the Ready reason, priority and storage classes
  kubectl custody targets -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				targets := &workloadv1alpha1.SyncTargetList{}
				if err := h.List(ctx, targets); err != nil {
					return listing{}, err
				}
				locations := &schedulingv1alpha1.LocationList{}
				if err := h.List(ctx, locations); err != nil {
					return listing{}, err
				}
				leases := &coordinationv1.LeaseList{}
				if err := h.List(ctx, leases, client.InNamespace(workloadv1alpha1.HeartbeatNamespace)); err != nil {
					return listing{}, err
				}
				return listing{list: targets, table: targetTable(targets.Items, locations.Items, leases.Items, time.Now())}, nil
			})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

var targetColumns = columns(
	[]string{"Name", "Key", "Locations", "Ready", "Last Heartbeat", "Domains"},
	"Reason", "Priority", "StorageClasses")

// targetTable is the table of targets, with the ages of their heartbeat Leases' last
// renewals taken at now.
func targetTable(targets []workloadv1alpha1.SyncTarget, locations []schedulingv1alpha1.Location, leases []coordinationv1.Lease, now time.Time) *metav1.Table {
	renewed := map[string]*metav1.Time{}
	for _, l := range leases {
		if r := l.Spec.RenewTime; r != nil {
			renewed[l.Name] = &metav1.Time{Time: r.Time}
		}
	}
	// A Location whose selector is invalid selects no target.
	in := map[string][]string{}
	for _, l := range locations {
		members, _ := schedulingv1alpha1.LocationTargets(l.Name, locations, targets)
		for _, m := range members {
			in[m.Name] = append(in[m.Name], l.Name)
		}
	}
	t := &metav1.Table{ColumnDefinitions: targetColumns}
	for i := range targets {
		st := &targets[i]
		status, reason := "Unknown", ""
		if c := meta.FindStatusCondition(st.Status.Conditions, workloadv1alpha1.ConditionReady); c != nil {
			status, reason = string(c.Status), c.Reason
		}
		var classes []string
		for _, c := range st.Status.StorageClasses {
			classes = append(classes, c.Name)
		}
		t.Rows = append(t.Rows, row(st,
			st.Name, orNone(st.Status.Key), joined(in[st.Name]), readiness(status, st.Spec),
			age(renewed[st.Name], now), joined(st.Spec.StorageDomains),
			orNone(reason), fmt.Sprint(st.Spec.Priority), joined(classes)))
	}
	return t
}

// readiness is the Ready status followed by what keeps namespaces off the target, as kubectl
// shows a cordoned node as Ready,SchedulingDisabled.
func readiness(status string, spec workloadv1alpha1.SyncTargetSpec) string {
	words := []string{status}
	if spec.Unschedulable {
		words = append(words, "Cordoned")
	}
	if spec.Evict {
		words = append(words, "Evicting")
	}
	return strings.Join(words, ",")
}
