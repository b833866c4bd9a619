package app

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func (o *options) describeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show the details of a volume",
		Args:  cobra.NoArgs,
		// Runnable, so that a wrong argument is an error rather than the help.
		RunE: func(*cobra.Command, []string) error {
			return errors.New(`name what to describe, as in "kubectl custody describe volume NAMESPACE/NAME"`)
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:     "volume NAMESPACE/NAME | NAME",
		Aliases: []string{"volumes", "vo"},
		Short:   "Show a volume's owner, sharers, phase and reclaim policy, and its transitions so far with their reasons",
		Example: `  # The volume of claim data in namespace shop
  kubectl custody describe volume shop/data`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := o.hub()
			if err != nil {
				return err
			}
			key, err := volumeKey(args[0], h.namespace, h.explicitNamespace)
			if err != nil {
				return err
			}
			v := &storagev1alpha1.VolumeOwnership{}
			if err := h.Get(cmd.Context(), key, v); err != nil {
				return notFound(err, "volume", key.String())
			}
			return describeVolume(o.streams.Out, v, time.Now())
		},
	})
	return cmd
}

// volumeKey reads NAMESPACE/NAME, or NAME in namespace ns. A namespace in the argument that
// differs from --namespace is an error rather than a guess.
func volumeKey(arg, ns string, explicitNamespace bool) (client.ObjectKey, error) {
	key := client.ObjectKey{Namespace: ns, Name: arg}
	if before, after, found := strings.Cut(arg, "/"); found {
		key = client.ObjectKey{Namespace: before, Name: after}
		if explicitNamespace && key.Namespace != ns {
			return key, fmt.Errorf("volume %q is not in namespace %q given by --namespace", arg, ns)
		}
	}
	if strings.Contains(key.Name, "/") || key.Namespace == "" || key.Name == "" {
		return key, fmt.Errorf("invalid volume %q: give NAMESPACE/NAME or NAME", arg)
	}
	if errs := validation.IsDNS1123Label(key.Namespace); len(errs) > 0 {
		return key, fmt.Errorf("invalid volume %q: namespace %q: %s", arg, key.Namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(key.Name); len(errs) > 0 {
		return key, fmt.Errorf("invalid volume %q: name %q: %s", arg, key.Name, strings.Join(errs, "; "))
	}
	return key, nil
}

// describeVolume writes a VolumeOwnership as kubectl describe does: a field per line, then
// the transitions, oldest first. Times are RFC 3339 in UTC.
func describeVolume(w io.Writer, v *storagev1alpha1.VolumeOwnership, now time.Time) error {
	s := &v.Status
	since := "<unknown>"
	if s.PhaseSince != nil {
		since = fmt.Sprintf("%s (%s ago)", timestamp(*s.PhaseSince), age(s.PhaseSince, now))
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, f := range [][2]string{
		{"Name", v.Name},
		{"Namespace", v.Namespace},
		{"Class", string(s.Class)},
		{"StorageClass", s.StorageClassName},
		{"Domain", s.Domain},
		{"Volume", s.VolumeName},
		{"Owner", s.Owner},
		{"Sharers", strings.Join(s.Sharers, ",")},
		{"Phase", string(s.Phase)},
		{"Since", since},
		{"Reclaim", string(s.Reclaim.Current)},
		{"Original Reclaim", string(s.Reclaim.Original)},
		{"Reason", s.Reason},
		{"Message", s.Message},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], orNone(f[1]))
	}
	if len(s.Transitions) == 0 {
		fmt.Fprintln(tw, "Transitions:\t<none>")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "Transitions:")
	fmt.Fprintln(tw, "  Time\tPhase\tOwner\tReason\tMessage")
	fmt.Fprintln(tw, "  ----\t-----\t-----\t------\t-------")
	for _, t := range s.Transitions {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", timestamp(t.Time), t.Phase, orNone(t.Owner), orNone(t.Reason), orNone(t.Message))
	}
	return tw.Flush()
}

func timestamp(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }
