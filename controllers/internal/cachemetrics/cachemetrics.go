package cachemetrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// CollectFunc reads what it reports through r and sends it on ch.
type CollectFunc func(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) error

// Collector is a prometheus.Collector that reads a controller's cache at every scrape.
type Collector struct {
	name    string
	descs   []*prometheus.Desc
	collect CollectFunc

	once   sync.Once
	mu     sync.Mutex
	reader client.Reader
	// managers counts the managers Register was called for: a manager that stops lets go
	// of its cache only while it is still the last one.
	managers int
}

// New is a Collector of the descriptors descs, which collect sends; name names the
// controller in the log of a failed list.
func New(name string, collect CollectFunc, descs ...*prometheus.Desc) *Collector {
	return &Collector{name: name, descs: descs, collect: collect}
}

// Register registers c, and the collectors others that the controller keeps itself, with
// controller-runtime's registry the first time it is called, and makes c read the cache of
// mgr, the controller's manager that starts now, until that manager stops: a stopped
// controller's cache, every object it held, is not kept for the next scrape.
func (c *Collector) Register(mgr manager.Manager, others ...prometheus.Collector) error {
	c.once.Do(func() { metrics.Registry.MustRegister(append([]prometheus.Collector{c}, others...)...) })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reader = mgr.GetCache()
	c.managers++
	return mgr.Add(release{c: c, manager: c.managers})
}

// release is a runnable of the manager'th manager that lets go of its cache as it stops.
type release struct {
	c       *Collector
	manager int
}

// Start waits for the manager to stop.
func (r release) Start(ctx context.Context) error {
	<-ctx.Done()
	r.c.mu.Lock()
	defer r.c.mu.Unlock()
	if r.c.managers == r.manager {
		r.c.reader = nil
	}
	return nil
}

// NeedLeaderElection: every replica reports its cache, the leader or not.
func (release) NeedLeaderElection() bool { return false }

// Describe sends the descriptors c reports.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect sends what the cache holds now; nothing before Register.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader := c.reader
	c.mu.Unlock()
	if reader == nil {
		return
	}
	if err := c.collect(context.Background(), reader, ch); err != nil {
		ctrl.Log.WithName(c.name).Error(err, "Listing for the metrics")
	}
}

// Gauge is a gauge of d with value v and the label values labels.
func Gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// OneOf sends, for each of values, a gauge of d that is 1 for the value current and 0 for
// the others, with the label values labels followed by the value: the kube-state-metrics
// way to report a phase, so that a query finds a 0 for a phase the object is not in.
func OneOf[T ~string](ch chan<- prometheus.Metric, d *prometheus.Desc, values []T, current T, labels ...string) {
	for _, v := range values {
		n := 0.0
		if v == current {
			n = 1
		}
		ch <- Gauge(d, n, append(labels, string(v))...)
	}
}

// Timestamp is a gauge of d whose value is the time t in seconds since the epoch, as
// Prometheus' time() counts, with the label values labels.
func Timestamp(d *prometheus.Desc, t time.Time, labels ...string) prometheus.Metric {
	return Gauge(d, float64(t.UnixNano())/1e9, labels...)
}
