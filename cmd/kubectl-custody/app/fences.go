package app

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func (o *options) fencesCommand() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "fences",
		Short: "List the Fences: which target is cut off which storage domain, how, by whom and since when",
		Long: `List the Fences, one row per target and storage domain: the mode (Network, executed by a
csi-addons NetworkFence, or Manual, an admin's statement that the member is powered off),
the state asked for, the phase, the target whose member executes the NetworkFence, the
time since the storage confirmed the fence (or since fencing was requested, until then)
and the reason of the phase. -o wide adds its message. A Fence is named TARGET.DOMAIN.`,
		Example: `  # Every Fence, with the message of its phase
  kubectl custody fences -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.list(cmd.Context(), out, func(ctx context.Context, h *hub) (listing, error) {
				list := &storagev1alpha1.FenceList{}
				if err := h.List(ctx, list); err != nil {
					return listing{}, err
				}
				sortFences(list.Items)
				return listing{list: list, table: fenceTable(list.Items, time.Now())}, nil
			})
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

// sortFences sorts Fences by target, then domain. The hub lists them by name, which puts
// target m1-a before m1 since '-' sorts before '.'.
func sortFences(items []storagev1alpha1.Fence) {
	slices.SortFunc(items, func(a, b storagev1alpha1.Fence) int {
		return cmp.Or(cmp.Compare(a.Spec.TargetName, b.Spec.TargetName), cmp.Compare(a.Spec.Domain, b.Spec.Domain))
	})
}

var fenceColumns = columns(
	[]string{"Target", "Domain", "Mode", "State", "Phase", "Executor", "Since", "Reason"},
	"Message")

// fenceTable is the table of Fences, their ages taken at now.
func fenceTable(items []storagev1alpha1.Fence, now time.Time) *metav1.Table {
	t := &metav1.Table{ColumnDefinitions: fenceColumns}
	for i := range items {
		f, s := &items[i], &items[i].Status
		since := s.FencedTime
		if since == nil {
			since = s.RequestedTime
		}
		t.Rows = append(t.Rows, row(f,
			f.Spec.TargetName, f.Spec.Domain, orNone(string(f.Spec.Mode)), orNone(string(f.Spec.State)), orNone(string(s.Phase)),
			orNone(s.Executor), age(since, now), orNone(s.Reason), orNone(s.Message)))
	}
	return t
}
