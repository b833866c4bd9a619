package dr

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/cachemetrics"
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
		"The recovery time of a pair's last completed failover, relocate or drill (mode): from the loss detected, or the switch declared, to every volume with a replica bound again and its workloads ready; for a drill, its RTO in its sandboxes.", []string{"pair", "mode"}, nil)
	recoveryPoint = prometheus.NewDesc("custody_pair_last_recovery_point_seconds",
		"The recovery point of a pair's last completed failover, relocate or drill (mode): the longest stretch of writes a volume lost (zero for a relocate); for a drill, its data window, what a failover at its start would have lost.", []string{"pair", "mode"}, nil)
	pairInterval = prometheus.NewDesc("custody_pair_replication_interval_seconds",
		"A pair's replication interval, its recovery point objective: a replica older than twice it is late.", []string{"pair"}, nil)
	pairPhase = prometheus.NewDesc("custody_pair_phase",
		"1 for the phase each pair is in, 0 for the others.", []string{"pair", "phase"}, nil)
	pairCondition = prometheus.NewDesc("custody_pair_condition",
		"1 for each condition of each pair, with its status and reason.", []string{"pair", "condition", "status", "reason"}, nil)
	switches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_pair_switches_total",
		Help: "Failovers and relocates started, by pair and mode, and whether the pair started it on its own.",
	}, []string{"pair", "mode", "automatic"})
	collector = cachemetrics.New("dr", collect, replicaTime, syncDuration, syncFailed, switchDuration, recoveryTime, recoveryPoint,
		pairInterval, pairPhase, pairCondition)
)

// pairPhases are the phases the phase gauge reports, also when no pair is in them.
var pairPhases = []schedulingv1alpha1.LocationPairPhase{
	schedulingv1alpha1.PairPending, schedulingv1alpha1.PairProtecting, schedulingv1alpha1.PairFailingOver,
	schedulingv1alpha1.PairFailedOver, schedulingv1alpha1.PairRelocating, schedulingv1alpha1.PairRelocated,
}

// collect reports the replication of every pair's volumes, and each pair's interval, phase,
// conditions and last switch.
func collect(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) error {
	replications := &storagev1alpha1.VolumeReplicationList{}
	pairs := &schedulingv1alpha1.LocationPairList{}
	for _, list := range []client.ObjectList{replications, pairs} {
		if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
			return err
		}
	}
	for _, vr := range replications.Items {
		labels := []string{vr.Spec.Pair, vr.Namespace, vr.Name}
		failed := 0.0
		if src := vr.Status.Source; src != nil {
			if src.LastSyncDuration != nil {
				ch <- cachemetrics.Gauge(syncDuration, src.LastSyncDuration.Seconds(), labels...)
			}
			if src.Result == "Failed" {
				failed = 1
			}
		}
		if dst := vr.Status.Destination; dst != nil {
			if t := dr.ImageTime(&vr); dst.LatestImageReady && t != nil {
				ch <- cachemetrics.Timestamp(replicaTime, t.Time, labels...)
			}
			if dst.Result == "Failed" {
				failed = 1
			}
		}
		ch <- cachemetrics.Gauge(syncFailed, failed, labels...)
	}
	for _, p := range pairs.Items {
		if a := p.Status.LastAction; a != nil && a.Duration != nil {
			ch <- cachemetrics.Gauge(switchDuration, a.Duration.Seconds(), p.Name, string(a.Mode))
		}
		for _, a := range lastCompleted(p.Status.History) {
			ch <- cachemetrics.Gauge(recoveryTime, a.RecoveryTime.Seconds(), p.Name, string(a.Mode))
			ch <- cachemetrics.Gauge(recoveryPoint, a.RecoveryPoint.Seconds(), p.Name, string(a.Mode))
		}
		if interval, err := dr.Interval(p.Spec.ReplicationInterval); err == nil {
			ch <- cachemetrics.Gauge(pairInterval, interval.Seconds(), p.Name)
		}
		cachemetrics.OneOf(ch, pairPhase, pairPhases, p.Status.Phase, p.Name)
		for _, c := range p.Status.Conditions {
			ch <- cachemetrics.Gauge(pairCondition, 1, p.Name, c.Type, string(c.Status), c.Reason)
		}
	}
	return nil
}

// registerMetrics registers the metrics once, and reports the objects of the cache of mgr,
// the controller that starts now.
func registerMetrics(mgr manager.Manager) error { return collector.Register(mgr, switches) }

// lastCompleted are, of each mode, the last switch or drill of the history that completed
// with its costs measured.
func lastCompleted(history []schedulingv1alpha1.PairAction) map[schedulingv1alpha1.SwitchMode]*schedulingv1alpha1.PairAction {
	out := map[schedulingv1alpha1.SwitchMode]*schedulingv1alpha1.PairAction{}
	for i := range history {
		if a := &history[i]; a.RecoveryTime != nil && a.RecoveryPoint != nil {
			out[a.Mode] = a
		}
	}
	return out
}
