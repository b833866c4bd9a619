package fencing

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/cachemetrics"
	"github.com/custody-dev/custody/fencing"
)

var (
	fenceLabels = []string{"fence", "target", "domain"}
	fencesDesc  = prometheus.NewDesc("custody_fences", "Fences by phase.", []string{"phase"}, nil)
	fencePhase  = prometheus.NewDesc("custody_fence_phase", "1 for the phase each Fence is in, 0 for the others.", append(fenceLabels, "phase"), nil)
	unconfirmed = prometheus.NewDesc("custody_fence_unconfirmed_since_timestamp_seconds",
		"When a Fence that asks to cut its target off, and that the storage has not confirmed yet, was asked for; absent once it holds.", fenceLabels, nil)
	waitingClean = prometheus.NewDesc("custody_fence_waiting_for_clean_since_timestamp_seconds",
		"When a Fence that holds a target that answers again began to wait for the target's clean report, on which it is lifted; absent while the target is away or once it reported clean.", fenceLabels, nil)
	unverified = prometheus.NewDesc("custody_target_fencing_unverified",
		"1 for a fencing target whose node CIDRs do not match the clients its storage reports (its FencingVerified condition is False), with the reason; absent otherwise.",
		[]string{"target", "reason"}, nil)
	fenceDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "custody_fence_duration_seconds",
		Help:    "Time from a Fence being asked for to the storage confirming it.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 12),
	})
	collector = cachemetrics.New("fencing", collect, fencesDesc, fencePhase, unconfirmed, waitingClean, unverified)
)

// phases are the phases the gauges report, also when no Fence is in them.
var phases = []storagev1alpha1.FencePhase{
	storagev1alpha1.FencePending, storagev1alpha1.FenceFencing, storagev1alpha1.FenceFenced,
	storagev1alpha1.FenceUnfencing, storagev1alpha1.FenceUnfenced, storagev1alpha1.FenceFailed,
}

// collect reports the Fences of the cache: how many are in each phase, and, per Fence, its
// phase and what it waits on; and the targets whose node CIDRs do not match their storage's
// clients.
func collect(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) error {
	list := &storagev1alpha1.FenceList{}
	targets := &workloadv1alpha1.SyncTargetList{}
	for _, l := range []client.ObjectList{list, targets} {
		if err := r.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
	}
	byName := map[string]*workloadv1alpha1.SyncTarget{}
	for i := range targets.Items {
		t := &targets.Items[i]
		byName[t.Name] = t
		if v, ok := fencing.Verify(t); ok && !v.Verified() {
			ch <- cachemetrics.Gauge(unverified, 1, t.Name, v.Reason())
		}
	}
	counts := map[storagev1alpha1.FencePhase]int{}
	for i := range list.Items {
		f := &list.Items[i]
		counts[f.Status.Phase]++
		labels := []string{f.Name, f.Spec.TargetName, f.Spec.Domain}
		cachemetrics.OneOf(ch, fencePhase, phases, f.Status.Phase, labels...)
		if since, ok := fencing.Unconfirmed(f); ok {
			ch <- cachemetrics.Timestamp(unconfirmed, since, labels...)
		}
		var view fencing.TargetView
		if t := byName[f.Spec.TargetName]; t != nil {
			var err error
			if view, err = targetView(ctx, r, t, f.Spec.Domain); err != nil {
				return err
			}
		}
		if since, ok := fencing.WaitingForClean(f, view); ok {
			ch <- cachemetrics.Timestamp(waitingClean, since, labels...)
		}
	}
	for _, p := range phases {
		ch <- cachemetrics.Gauge(fencesDesc, float64(counts[p]), string(p))
	}
	return nil
}

// registerMetrics registers the Fence metrics once, and reports the Fences of the cache of
// mgr, the controller that starts now.
func registerMetrics(mgr manager.Manager) error { return collector.Register(mgr, fenceDuration) }

// observeFenced records how long the Fence took to hold.
func observeFenced(st *storagev1alpha1.FenceStatus) {
	if st.RequestedTime != nil {
		fenceDuration.Observe(time.Since(st.RequestedTime.Time).Seconds())
	}
}
