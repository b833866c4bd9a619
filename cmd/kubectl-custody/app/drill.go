package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// drillCommand starts a drill of a pair, or ends it, and follows it.
func (o *options) drillCommand() *cobra.Command {
	var end, wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "drill PAIR [--end] [--wait=false]",
		Short: "Rehearse a failover of a LocationPair without disturbing it, or end the rehearsal",
		Long: `Start a drill of a LocationPair: the latest replica of every protected volume of the pair is
restored into sandbox namespaces at the Location the pair does not run in (each namespace
NS of the pair is copied into NS-drill: its ConfigMaps, Secrets, ServiceAccounts, Services
as ClusterIP, Deployments, StatefulSets and claims), and the copies of its workloads start
there. The pair keeps running and replicating at its active Location, untouched.

A NetworkPolicy in each sandbox lets its pods reach only each other and the cluster's DNS,
and nothing outside the sandbox reach them, where the member's network plugin enforces
NetworkPolicies; the Services of the sandbox take no traffic from outside the cluster.

The command writes a Drill named as the pair (kubectl get drills lists them), then follows
it until every claim is bound and every workload ready, saying how far it is (N of M
volumes restored, the workloads it waits for), and at the end its RTO (from the start to
ready) and its data window (how old the oldest replica restored was: what a failover at
the start would have lost). --wait=false returns once the drill is asked.

--end deletes the Drill and follows it until its sandboxes are gone, with the volumes
restored into them and nothing else. The pair's history (kubectl custody history PAIR)
records every drill.`,
		Example: "  kubectl custody drill shop\n  kubectl custody drill shop --end",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := o.hub()
			if err != nil {
				return err
			}
			name := args[0]
			if end {
				err = o.endDrill(cmd.Context(), h, name)
			} else {
				err = o.startDrill(cmd.Context(), h, name)
			}
			if err != nil || !wait {
				return err
			}
			return o.followDrill(cmd.Context(), h, name, end, timeout)
		},
	}
	cmd.Flags().BoolVar(&end, "end", false, "End the pair's drill, removing what it made.")
	cmd.Flags().BoolVar(&wait, "wait", true, "Follow the drill until it is ready, or until it is gone with --end.")
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "How long to follow the drill; 0 follows it until it is done.")
	return cmd
}

// startDrill writes the Drill of the pair called name, unless one runs already.
func (o *options) startDrill(ctx context.Context, h *hub, name string) error {
	if err := h.Get(ctx, client.ObjectKey{Name: name}, &schedulingv1alpha1.LocationPair{}); err != nil {
		return notFound(err, "locationpair", name)
	}
	d := &schedulingv1alpha1.Drill{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1alpha1.DrillSpec{Pair: name}}
	switch err := h.Create(ctx, d); {
	case apierrors.IsAlreadyExists(err):
		fmt.Fprintf(o.streams.Out, "drill/%s: runs already; kubectl custody drill %s --end ends it\n", name, name)
	case err != nil:
		return fmt.Errorf("drill/%s: %s", name, o.explain(err))
	default:
		fmt.Fprintf(o.streams.Out, "drill/%s: started\n", name)
	}
	return nil
}

// endDrill deletes the Drill called name.
func (o *options) endDrill(ctx context.Context, h *hub, name string) error {
	d := &schedulingv1alpha1.Drill{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := h.Delete(ctx, d); err != nil {
		return notFound(err, "drill", name)
	}
	fmt.Fprintf(o.streams.Out, "drill/%s: ending\n", name)
	return nil
}

// followDrill reads the drill called name until it is ready, or gone when it was ended.
func (o *options) followDrill(ctx context.Context, c client.Reader, name string, ended bool, timeout time.Duration) error {
	return o.follow(ctx, "drill/"+name, "kubectl get drill "+name, timeout, func() (string, string, error) {
		d := &schedulingv1alpha1.Drill{}
		err := c.Get(ctx, client.ObjectKey{Name: name}, d)
		switch {
		case ended && apierrors.IsNotFound(err):
			return "", "ended: its sandboxes are gone, with the volumes restored into them", nil
		case err != nil:
			return "", "", err
		case !ended && d.Status.Phase == schedulingv1alpha1.DrillReady:
			return "", drillSummary(d), nil
		}
		return drillProgress(d), "", nil
	})
}

// drillProgress says where a drill stands: its phase and what it waits for.
func drillProgress(d *schedulingv1alpha1.Drill) string {
	c := meta.FindStatusCondition(d.Status.Conditions, schedulingv1alpha1.ConditionReady)
	switch {
	case d.Status.Phase == "":
		return "waiting for the hub to take the drill up"
	case c == nil:
		return string(d.Status.Phase)
	}
	return string(d.Status.Phase) + ": " + c.Message
}

// drillSummary says what a ready drill measured, and where its sandboxes are.
func drillSummary(d *schedulingv1alpha1.Drill) string {
	st := d.Status
	out := fmt.Sprintf("ready in %s", st.Location)
	if st.RecoveryTime != nil {
		out += fmt.Sprintf(", RTO %s", st.RecoveryTime.Round(time.Second))
	}
	if st.DataWindow != nil {
		out += fmt.Sprintf(", data window %s", st.DataWindow.Round(time.Second))
	}
	out += fmt.Sprintf("; volumes restored %d of %d", st.Restored, st.Volumes)
	if st.Unprotected > 0 {
		out += fmt.Sprintf(" (%d made empty, having no replica)", st.Unprotected)
	}
	var sandboxes []string
	for _, ns := range st.Namespaces {
		sandboxes = append(sandboxes, ns.Namespace+" in "+ns.Sandbox)
	}
	if len(sandboxes) > 0 {
		out += "; sandboxes: " + strings.Join(sandboxes, ", ")
	}
	return out + fmt.Sprintf("; kubectl custody drill %s --end ends it", d.Spec.Pair)
}
