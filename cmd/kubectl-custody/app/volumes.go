package app

import (
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
			p, err := out.printer()
			if err != nil {
				return err
			}
			h, err := o.hub()
			if err != nil {
				return err
			}
			l := listing{list: &storagev1alpha1.VolumeOwnershipList{}, namespace: h.namespace, allNamespaces: all}
			if all {
				l.namespace = ""
			}
			if err := h.List(cmd.Context(), l.list, client.InNamespace(l.namespace)); err != nil {
				return err
			}
			l.table = volumeTable(l.list.(*storagev1alpha1.VolumeOwnershipList).Items, time.Now())
			return out.write(o.streams, p, l)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "List the volumes of every namespace.")
	out = addOutputFlags(cmd)
	return cmd
}

var volumeColumns = []metav1.TableColumnDefinition{
	column("Name", "The name of the claim and of its VolumeOwnership.", false),
	column("Class", "Shared, Owned or Internal.", false),
	column("Owner", "The key of the target that owns or provisions the volume.", false),
	column("Sharers", "The keys of the other targets that use a shared volume.", false),
	column("Phase", "Where the volume stands.", false),
	column("Since", "How long the volume has been in its phase.", false),
	column("Reclaim", "The reclaim policy of the downstream copies now.", false),
	column("StorageClass", "The claim's StorageClass.", true),
	column("Domain", "The storage domain of the volume.", true),
	column("Volume", "The hub PersistentVolume bound to the claim.", true),
	column("Reason", "Why the volume is where it stands.", true),
}

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
