package app

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// cordonCommand is cordon (unschedulable true) or uncordon (false).
func (o *options) cordonCommand(unschedulable bool) *cobra.Command {
	verb, short, long := "cordon", "Mark a sync target unschedulable", `Mark a sync target unschedulable: no namespace is placed on it, and the namespaces on it
move to another target of their Location when one can take them.`
	if !unschedulable {
		verb, short, long = "uncordon", "Mark a sync target schedulable again", ""
	}
	done := verb + "ed"
	return &cobra.Command{
		Use:     verb + " TARGET",
		Short:   short,
		Long:    long,
		Example: fmt.Sprintf("  kubectl custody %s member-1", verb),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := o.hub()
			if err != nil {
				return err
			}
			t := &workloadv1alpha1.SyncTarget{}
			if err := h.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, t); err != nil {
				return notFound(err, "synctarget", args[0])
			}
			if t.Spec.Unschedulable == unschedulable {
				fmt.Fprintf(o.streams.Out, "synctarget/%s already %s\n", t.Name, done)
				return nil
			}
			patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, unschedulable)
			if err := h.Patch(cmd.Context(), t, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return notFound(err, "synctarget", args[0])
			}
			fmt.Fprintf(o.streams.Out, "synctarget/%s %s\n", t.Name, done)
			return nil
		},
	}
}
