package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func (o *options) describeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe",
		Short: "Show the details of a volume, a Fence or a LocationPair",
		Args:  cobra.NoArgs,
		// Runnable, so that a wrong argument is an error rather than the help.
		RunE: func(*cobra.Command, []string) error {
			return errors.New(`name what to describe, as in "kubectl custody describe volume NAMESPACE/NAME", "kubectl custody describe fence NAME" or "kubectl custody describe pair NAME"`)
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
	cmd.AddCommand(o.describeFenceCommand(), o.describePairCommand())
	return cmd
}

func (o *options) describeFenceCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "fence NAME",
		Aliases: []string{"fences"},
		Short:   "Show a Fence's target, domain, mode and phase, the executor's NetworkFence report, the time of each step and its events",
		Long: `Show a Fence: its target, storage domain, mode and the state asked for; its phase with
the reason, the executor and what its NetworkFence reported; when fencing was requested,
confirmed, and when unfencing started and was confirmed; its conditions and events. A Fence
is named TARGET.DOMAIN.`,
		Example: `  # The Fence of target member-1 in storage domain east
  kubectl custody describe fence member-1.east`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := o.hub()
			if err != nil {
				return err
			}
			f := &storagev1alpha1.Fence{}
			if err := h.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, f); err != nil {
				return notFound(err, "fence", args[0])
			}
			events, err := eventsOf(cmd.Context(), h, f)
			if err != nil {
				return err
			}
			return describeFence(o.streams.Out, f, events, time.Now())
		},
	}
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
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	writeFields(tw, [][2]string{
		{"Name", v.Name},
		{"Namespace", v.Namespace},
		{"Class", string(s.Class)},
		{"StorageClass", s.StorageClassName},
		{"Domain", s.Domain},
		{"Volume", s.VolumeName},
		{"Owner", s.Owner},
		{"Sharers", strings.Join(s.Sharers, ",")},
		{"Fenced Off", strings.Join(s.FencedOff, ",")},
		{"Replica", replicaText(s.Replica, now)},
		{"Restored From", replicaText(s.RestoredFrom, now)},
		{"Set Aside", setAsideText(s.SetAside, now)},
		{"Earlier Set Aside", earlierSetAsideText(s.EarlierSetAside, now)},
		{"Phase", string(s.Phase)},
		{"Since", cmp.Or(when(s.PhaseSince, now), "<unknown>")},
		{"Reclaim", string(s.Reclaim.Current)},
		{"Original Reclaim", string(s.Reclaim.Original)},
		{"Reason", s.Reason},
		{"Message", s.Message},
	})
	writeConditions(tw, s.Conditions)
	var rows [][]string
	for _, t := range s.Transitions {
		rows = append(rows, []string{timestamp(t.Time), string(t.Phase), orNone(t.Owner), orNone(t.Reason), orNone(t.Message)})
	}
	writeSection(tw, "Transitions", []string{"Time", "Phase", "Owner", "Reason", "Message"}, rows)
	return tw.Flush()
}

// replicaText says where a replica is and when its data was taken.
func replicaText(r *storagev1alpha1.Replica, now time.Time) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("snapshot %s on %s, taken %s", r.Snapshot, r.Target, cmp.Or(when(&r.Time, now), "<unknown>"))
}

// setAsideText says which storage a restore set aside, and where it was last.
func setAsideText(a *storagev1alpha1.SetAsideVolume, now time.Time) string {
	if a == nil {
		return ""
	}
	return fmt.Sprintf("%s %s in storage domain %s, last on %s, since %s; kept, not released", a.Driver, a.VolumeHandle, a.Domain, a.Target, when(&a.Time, now))
}

// earlierSetAsideText lists the storage that restores before the last one set aside.
func earlierSetAsideText(l []storagev1alpha1.SetAsideVolume, now time.Time) string {
	var out []string
	for i := range l {
		out = append(out, setAsideText(&l[i], now))
	}
	return strings.Join(out, "; ")
}

// writeFields writes one "Name:<tab>value" line per field, <none> for an empty value.
func writeFields(tw io.Writer, fields [][2]string) {
	for _, f := range fields {
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], orNone(f[1]))
	}
}

// writeSection writes a titled table indented under its title, as kubectl describe writes
// events: the header, a rule under each column name, then the rows; <none> beside the title
// when there are no rows.
func writeSection(tw io.Writer, title string, header []string, rows [][]string) {
	if len(rows) == 0 {
		fmt.Fprintf(tw, "%s:\t<none>\n", title)
		return
	}
	fmt.Fprintf(tw, "%s:\n", title)
	rule := make([]string, len(header))
	for i, h := range header {
		rule[i] = strings.Repeat("-", len(h))
	}
	for _, r := range append([][]string{header, rule}, rows...) {
		fmt.Fprintf(tw, "  %s\n", strings.Join(r, "\t"))
	}
}

// writeConditions writes the conditions as a section.
func writeConditions(tw io.Writer, conditions []metav1.Condition) {
	var rows [][]string
	for _, c := range conditions {
		rows = append(rows, []string{c.Type, string(c.Status), orNone(c.Reason), orNone(c.Message)})
	}
	writeSection(tw, "Conditions", []string{"Type", "Status", "Reason", "Message"}, rows)
}

// when is t and how long before now it was, "" when t is not set.
func when(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return ""
	}
	return fmt.Sprintf("%s (%s ago)", timestamp(*t), age(t, now))
}

func timestamp(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }

// eventsOf reads the events about obj, in every namespace as kubectl describe does: the
// events of a cluster-scoped object are in namespace default.
func eventsOf(ctx context.Context, h *hub, obj client.Object) ([]corev1.Event, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return nil, err
	}
	list := &corev1.EventList{}
	err = h.List(ctx, list, client.MatchingFields{
		"involvedObject.kind": gvk.Kind,
		"involvedObject.name": obj.GetName(),
		"involvedObject.uid":  string(obj.GetUID()),
	})
	return list.Items, err
}

// describeFence writes a Fence as kubectl describe does: its spec and status a field per
// line, what the executor's NetworkFence reported, then its conditions and its events, oldest
// first. Times are RFC 3339 in UTC.
func describeFence(w io.Writer, f *storagev1alpha1.Fence, events []corev1.Event, now time.Time) error {
	s := &f.Status
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	writeFields(tw, [][2]string{
		{"Name", f.Name},
		{"Target", f.Spec.TargetName},
		{"Domain", f.Spec.Domain},
		{"Mode", string(f.Spec.Mode)},
		{"State", string(f.Spec.State)},
		{"Held By", f.Spec.HeldBy},
		{"Phase", string(s.Phase)},
		{"Executor", s.Executor},
		{"Reason", s.Reason},
		{"Message", s.Message},
		{"Requested", when(s.RequestedTime, now)},
		{"Fenced", when(s.FencedTime, now)},
		{"Unfencing", when(s.UnfencingTime, now)},
		{"Unfenced", when(s.UnfencedTime, now)},
	})
	if nf := s.NetworkFence; nf == nil {
		writeFields(tw, [][2]string{{"Network Fence", ""}})
	} else {
		fmt.Fprintln(tw, "Network Fence:")
		writeFields(tw, [][2]string{
			{"  Class", nf.ClassName},
			{"  CIDRs", strings.Join(nf.CIDRs, ",")},
			{"  Reported By", nf.ReportedBy},
			{"  Fence State", string(nf.FenceState)},
			{"  Result", nf.Result},
			{"  Message", nf.Message},
		})
	}
	writeConditions(tw, s.Conditions)
	writeSection(tw, "Events", []string{"Type", "Reason", "Age", "From", "Message"}, eventRows(events, now))
	return tw.Flush()
}

// eventRows are the rows of events, oldest first, their ages taken at now.
func eventRows(events []corev1.Event, now time.Time) [][]string {
	events = slices.Clone(events)
	slices.SortStableFunc(events, func(a, b corev1.Event) int { return eventTime(&a).Compare(eventTime(&b).Time) })
	var rows [][]string
	for i := range events {
		e := &events[i]
		rows = append(rows, []string{e.Type, e.Reason, age(eventTime(e), now), orNone(cmp.Or(e.Source.Component, e.ReportingController)), orNone(e.Message)})
	}
	return rows
}

// eventTime is when an event last happened: an events.k8s.io event has its event time, or
// the time last observed once it repeats; a core event has its last timestamp.
func eventTime(e *corev1.Event) *metav1.Time {
	t := e.EventTime.Time
	switch {
	case e.Series != nil:
		t = e.Series.LastObservedTime.Time
	case !e.LastTimestamp.IsZero():
		t = e.LastTimestamp.Time
	}
	return &metav1.Time{Time: t}
}
