package dr

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
)

var (
	volumeLabels = []string{"pair", "namespace", "claim"}
	replicaTime  = prometheus.NewDesc("custody_volume_replica_timestamp_seconds",
		"When the data of a volume's latest ready replica was taken: time() minus it is what a failover now would lose.", volumeLabels, nil)
	syncDuration = prometheus.NewDesc("custody_volume_last_sync_duration_seconds",
		"How long a volume's last completed sync took.", volumeLabels, nil)
	syncFailed = prometheus.NewDesc("custody_volume_sync_failed",
		"1 while a volume's last sync failed; it is retried on the schedule.", volumeLabels, nil)
	switchDuration = prometheus.NewDesc("custody_pair_last_switch_duration_seconds",
		"How long a pair's last completed failover or relocate took, from its start to every volume bound again.", []string{"pair", "mode"}, nil)
	recoveryTime = prometheus.NewDesc("custody_pair_last_recovery_time_seconds",
		"The recovery time of a pair's last completed failover or relocate: from the loss detected, or the switch declared, to every volume with a replica bound again.", []string{"pair", "mode"}, nil)
	recoveryPoint = prometheus.NewDesc("custody_pair_last_recovery_point_seconds",
		"The recovery point of a pair's last completed failover or relocate: the longest stretch of writes a volume lost (zero for a relocate).", []string{"pair", "mode"}, nil)
	switches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_pair_switches_total",
		Help: "Failovers and relocates started, by pair and mode, and whether the pair started it on its own.",
	}, []string{"pair", "mode", "automatic"})
	registerOnce sync.Once
)

// drCollector reports the replication of every pair's volumes, and the pairs' last
// switches, from the cache of the running controller at every scrape.
type drCollector struct {
	mu     sync.Mutex
	reader client.Reader
}

var collector = &drCollector{}

func (c *drCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{replicaTime, syncDuration, syncFailed, switchDuration, recoveryTime, recoveryPoint} {
		ch <- d
	}
}

func (c *drCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	reader := c.reader
	c.mu.Unlock()
	replications := &storagev1alpha1.VolumeReplicationList{}
	pairs := &schedulingv1alpha1.LocationPairList{}
	for _, list := range []client.ObjectList{replications, pairs} {
		if err := reader.List(context.Background(), list); err != nil {
			ctrl.Log.WithName("dr").Error(err, "Listing for the metrics")
			return
		}
	}
	for _, vr := range replications.Items {
		labels := []string{vr.Spec.Pair, vr.Namespace, vr.Name}
		failed := 0.0
		if src := vr.Status.Source; src != nil {
			if src.LastSyncDuration != nil {
				ch <- prometheus.MustNewConstMetric(syncDuration, prometheus.GaugeValue, src.LastSyncDuration.Seconds(), labels...)
			}
			if src.Result == "Failed" {
				failed = 1
			}
		}
		if dst := vr.Status.Destination; dst != nil {
			if t := dr.ImageTime(&vr); dst.LatestImageReady && t != nil {
				ch <- prometheus.MustNewConstMetric(replicaTime, prometheus.GaugeValue, float64(t.Unix()), labels...)
			}
			if dst.Result == "Failed" {
				failed = 1
			}
		}
		ch <- prometheus.MustNewConstMetric(syncFailed, prometheus.GaugeValue, failed, labels...)
	}
	for _, p := range pairs.Items {
		if a := p.Status.LastAction; a != nil && a.Duration != nil {
			ch <- prometheus.MustNewConstMetric(switchDuration, prometheus.GaugeValue, a.Duration.Seconds(), p.Name, string(a.Mode))
		}
		if a := lastCompleted(p.Status.History); a != nil {
			ch <- prometheus.MustNewConstMetric(recoveryTime, prometheus.GaugeValue, a.RecoveryTime.Seconds(), p.Name, string(a.Mode))
			ch <- prometheus.MustNewConstMetric(recoveryPoint, prometheus.GaugeValue, a.RecoveryPoint.Seconds(), p.Name, string(a.Mode))
		}
	}
}

// registerMetrics registers the metrics once, and reports the objects of reader, the cache
// of the controller that starts now.
func registerMetrics(reader client.Reader) {
	registerOnce.Do(func() { metrics.Registry.MustRegister(collector, switches) })
	collector.mu.Lock()
	defer collector.mu.Unlock()
	collector.reader = reader
}

// lastCompleted is the last switch of the history that completed with its costs measured;
// nil when there is none.
func lastCompleted(history []schedulingv1alpha1.PairAction) *schedulingv1alpha1.PairAction {
	for i := len(history) - 1; i >= 0; i-- {
		if a := &history[i]; a.RecoveryTime != nil && a.RecoveryPoint != nil {
			return a
		}
	}
	return nil
}
