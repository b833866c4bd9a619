package app

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func (o *options) volumesCommand() *cobra.Command {
	var all, retained bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "volumes",
		Aliases: []string{"volume", "vo"},
		Short:   "List the volumes: owner, sharers, phase and reclaim policy of each hub claim",
		Long: `List the volumes, one row per hub PersistentVolumeClaim (its VolumeOwnership): class,
owner, sharers, phase, time in the phase and the current reclaim policy of its downstream
copies. -o wide adds the storage class, storage domain, hub PV and the reason of the phase.

--retained lists instead the hub PVs that deleted claims left behind with their storage
(reclaim policy Retain, or no target had a copy to release it through): the claim each
held, capacity, storage class, storage domain, the target that held it last and how long
ago it was released. Deleting such a PV releases no storage.`,
		Example: `  # The volumes of the current namespace
  kubectl custody volumes

  # Every namespace, with storage class, domain, PV and reason
  kubectl custody volumes -A -o wide

  # The storage that deleted claims of every namespace kept
  kubectl custody volumes --retained -A`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				ns := h.namespace
				if all {
					ns = ""
				}
				if retained {
					return retainedListing(ctx, h, ns)
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
	cmd.Flags().BoolVar(&retained, "retained", false, "List the hub PVs that deleted claims left Released, keeping their storage.")
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

// retainedListing reads the hub PVs kept for the deleted claims of namespace ns ("" for
// every namespace).
func retainedListing(ctx context.Context, h *hub, ns string) (listing, error) {
	all := &corev1.PersistentVolumeList{}
	if err := h.List(ctx, all); err != nil {
		return listing{}, err
	}
	list := &corev1.PersistentVolumeList{ListMeta: all.ListMeta, Items: retainedVolumes(all.Items, ns)}
	return listing{list: list, table: retainedTable(list.Items, time.Now()), namespace: ns}, nil
}

// retainedVolumes are the PVs that coordination kept for deleted claims of namespace ns:
// Released, on no target, naming a claim. The hub runs no PV binder, so no other PV there
// is Released.
func retainedVolumes(pvs []corev1.PersistentVolume, ns string) []corev1.PersistentVolume {
	var out []corev1.PersistentVolume
	for _, pv := range pvs {
		ref := pv.Spec.ClaimRef
		if pv.Status.Phase == corev1.VolumeReleased && len(workloadv1alpha1.Targets(&pv)) == 0 &&
			ref != nil && (ns == "" || ref.Namespace == ns) {
			out = append(out, pv)
		}
	}
	return out
}

var retainedColumns = columns([]string{"Name", "Claim", "Capacity", "StorageClass", "Domain", "Last Owner", "Since"})

// retainedTable is the table of retained hub PVs, the time since each was released taken at
// now.
func retainedTable(pvs []corev1.PersistentVolume, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: retainedColumns}
	for i := range pvs {
		pv := &pvs[i]
		capacity := ""
		if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; ok {
			capacity = q.String()
		}
		t.Rows = append(t.Rows, row(pv,
			pv.Name, pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name, orNone(capacity), orNone(pv.Spec.StorageClassName),
			orNone(pv.Annotations[storagev1alpha1.DomainAnnotation]), orNone(pv.Annotations[storagev1alpha1.LastOwnerAnnotation]),
			age(pv.Status.LastPhaseTransitionTime, now)))
	}
	return t
}
