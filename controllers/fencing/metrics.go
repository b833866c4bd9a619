package fencing

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

var (
	fencesDesc    = prometheus.NewDesc("custody_fences", "Fences by phase.", []string{"phase"}, nil)
	fenceDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "custody_fence_duration_seconds",
		Help:    "Time from a Fence being asked for to the storage confirming it.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 12),
	})
	registerOnce sync.Once
)

// phases are the phases the gauge reports, also when no Fence is in them.
var phases = []storagev1alpha1.FencePhase{
	storagev1alpha1.FencePending, storagev1alpha1.FenceFencing, storagev1alpha1.FenceFenced,
	storagev1alpha1.FenceUnfencing, storagev1alpha1.FenceUnfenced, storagev1alpha1.FenceFailed,
}

// fenceCollector counts the Fences by phase from the cache of the running controller at
// every scrape.
type fenceCollector struct {
	mu     sync.Mutex
	reader client.Reader
}

var collector = &fenceCollector{}

func (c *fenceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- fencesDesc }

func (c *fenceCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader := c.reader
	c.mu.Unlock()
	list := &storagev1alpha1.FenceList{}
	if err := reader.List(context.Background(), list); err != nil {
		ctrl.Log.WithName("fencing").Error(err, "Listing Fences for the metrics")
		return
	}
	counts := map[storagev1alpha1.FencePhase]int{}
	for _, f := range list.Items {
		counts[f.Status.Phase]++
	}
	for _, p := range phases {
		ch <- prometheus.MustNewConstMetric(fencesDesc, prometheus.GaugeValue, float64(counts[p]), string(p))
	}
}

// registerMetrics registers the Fence metrics once, and counts the Fences of reader, the
// cache of the controller that starts now.
func registerMetrics(reader client.Reader) {
	registerOnce.Do(func() { metrics.Registry.MustRegister(collector, fenceDuration) })
	collector.mu.Lock()
	defer collector.mu.Unlock()
	collector.reader = reader
}

// observeFenced records how long the Fence took to hold.
func observeFenced(st *storagev1alpha1.FenceStatus) {
	if st.RequestedTime != nil {
		fenceDuration.Observe(time.Since(st.RequestedTime.Time).Seconds())
	}
}
