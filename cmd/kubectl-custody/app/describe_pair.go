package app

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func (o *options) describePairCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "pair NAME",
		Aliases: []string{"pairs", "lp"},
		Short:   "Show a LocationPair: where it runs, its last failover or relocate, and every volume with its last sync and lag",
		Long: `Show a LocationPair: its Locations, the active one, the phase, the replication interval
and the failover threshold; the last failover or relocate with its step, times and the
oldest replica a volume came back from; its conditions; every replicated volume with its
source and destination, the time of its latest replica, how far that is behind now (the
data a failover now would lose) and the last sync's result; and its events.`,
		Example: `  # The pair shop
  kubectl custody describe pair shop`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := o.hub()
			if err != nil {
				return err
			}
			p := &schedulingv1alpha1.LocationPair{}
			if err := h.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, p); err != nil {
				return notFound(err, "pair", args[0])
			}
			replications := &storagev1alpha1.VolumeReplicationList{}
			if err := h.List(cmd.Context(), replications, client.MatchingLabels{schedulingv1alpha1.PairLabel: p.Name}); err != nil {
				return err
			}
			events, err := eventsOf(cmd.Context(), h, p)
			if err != nil {
				return err
			}
			return describePair(o.streams.Out, p, replications.Items, events, time.Now())
		},
	}
}

// describePair writes a LocationPair as kubectl describe does: its spec and status a field
// per line, its last action, its conditions, its volumes by namespace and name, then its
// events. Times are RFC 3339 in UTC.
func describePair(w io.Writer, p *schedulingv1alpha1.LocationPair, replications []storagev1alpha1.VolumeReplication, events []corev1.Event, now time.Time) error {
	s := &p.Status
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	threshold := ""
	if t := p.Spec.FailoverThreshold; t != nil {
		threshold = t.Duration.String()
	}
	writeFields(tw, [][2]string{
		{"Name", p.Name},
		{"Primary", p.Spec.Primary},
		{"Secondary", p.Spec.Secondary},
		{"Active", s.ActiveLocation},
		{"Declared Active", p.Spec.ActiveLocation},
		{"Phase", string(s.Phase)},
		{"Interval", p.Spec.ReplicationInterval},
		{"Failover Threshold", threshold},
		{"Protected Volumes", fmt.Sprintf("%d/%d", s.ProtectedVolumes, s.Volumes)},
		{"Oldest Replica", when(s.OldestLastSyncTime, now)},
	})
	if a := s.LastAction; a == nil {
		writeFields(tw, [][2]string{{"Last Action", ""}})
	} else {
		fmt.Fprintln(tw, "Last Action:")
		duration := ""
		if a.Duration != nil {
			duration = a.Duration.Duration.String()
		}
		writeFields(tw, [][2]string{
			{"  Mode", string(a.Mode)},
			{"  Automatic", fmt.Sprint(a.Automatic)},
			{"  From", a.From},
			{"  To", a.To},
			{"  Progression", a.Progression},
			{"  Started", when(&a.StartTime, now)},
			{"  Completed", when(a.CompletionTime, now)},
			{"  Duration", duration},
			{"  Oldest Replica Restored", when(a.OldestReplicaTime, now)},
		})
	}
	writeConditions(tw, s.Conditions)
	writeSection(tw, "Volumes", []string{"Volume", "Source", "Destination", "Replica", "Lag", "Last Sync", "Result"}, volumeRows(replications, now))
	writeSection(tw, "Events", []string{"Type", "Reason", "Age", "From", "Message"}, eventRows(events, now))
	return tw.Flush()
}

// volumeRows are a pair's volumes, by namespace and name: the time of each one's latest
// replica and how long before now that is.
func volumeRows(replications []storagev1alpha1.VolumeReplication, now time.Time) [][]string {
	replications = slices.Clone(replications)
	slices.SortFunc(replications, func(a, b storagev1alpha1.VolumeReplication) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	var rows [][]string
	for i := range replications {
		vr := &replications[i]
		replica, lag, result := "", "", ""
		if d := vr.Status.Destination; d != nil && d.LatestImageReady && d.LatestImageTime != nil {
			replica, lag = timestamp(*d.LatestImageTime), age(d.LatestImageTime, now)
		}
		last := ""
		if src := vr.Status.Source; src != nil {
			last = when(src.LastSyncTime, now)
			result = src.Result
			if src.Message != "" {
				result += ": " + src.Message
			}
		}
		rows = append(rows, []string{vr.Namespace + "/" + vr.Name, vr.Spec.Source, vr.Spec.Destination,
			orNone(replica), orNone(lag), orNone(last), orNone(result)})
	}
	return rows
}
