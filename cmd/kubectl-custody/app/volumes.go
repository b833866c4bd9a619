package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func (o *options) volumesCommand() *cobra.Command {
	var all bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "volumes",
		Aliases: []string{"volume", "vo"},
		Short:   "List the volumes: owner, sharers, phase and reclaim policy of each hub claim",
		Long: `List the volumes, one row per hub PersistentVolumeClaim (its VolumeOwnership): class,
owner, sharers, phase, time in the phase and the current reclaim policy of its downstream
copies. -o wide adds the storage class, storage domain, hub PV and the reason of the phase.`,
		Example: `  # The volumes of the current namespace
  kubectl custody volumes

  # Every namespace, with storage class, domain, PV and reason
  kubectl custody volumes -A -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				ns := h.namespace
				if all {
					ns = ""
				}
				list := &storagev1alpha1.VolumeOwnershipList{}
				if err := h.List(ctx, list, client.InNamespace(ns)); err != nil {
					return listing{}, err
				}
				return listing{list: list, table: volumeTable(list.Items, time.Now()), namespace: ns, allNamespaces: all}, nil
			})
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List the volumes of every namespace.")
	out = addOutputFlags(cmd)
	return cmd
}

var volumeColumns = columns(
	[]string{"Name", "Class", "Owner", "Sharers", "Phase", "Since", "Reclaim"},
	"StorageClass", "Domain", "Volume", "Reason")

// volumeTable is the table of volumes, their ages taken at now.
func volumeTable(items []storagev1alpha1.VolumeOwnership, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: volumeColumns}
	for i := range items {
		v, s := &items[i], &items[i].Status
		t.Rows = append(t.Rows, row(v,
			v.Name, orNone(string(s.Class)), orNone(s.Owner), joined(s.Sharers), orNone(string(s.Phase)),
			age(s.PhaseSince, now), orNone(string(s.Reclaim.Current)),
			orNone(s.StorageClassName), orNone(s.Domain), orNone(s.VolumeName), orNone(s.Reason)))
	}
	return t
}
