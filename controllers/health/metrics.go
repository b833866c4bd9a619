package health

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/cachemetrics"
)

var (
	targetsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "custody_targets",
		Help: "SyncTargets by health: Ready, Unreachable or NeverSeen.",
	}, []string{"state"})
	targetState = prometheus.NewDesc("custody_target_state_since_timestamp_seconds",
		"When each SyncTarget entered its health (the state label: Ready, Unreachable or NeverSeen), from its Ready condition.", []string{"target", "state"}, nil)
	collector = cachemetrics.New("health", collect, targetState)
)

// targetStates remembers each target's last verdict, so that the gauge counts each once.
type targetStates struct {
	mu     sync.Mutex
	states map[string]string
}

// newTargetStates registers the metrics once, and reports the targets of the cache of mgr,
// the controller that starts now.
func newTargetStates(mgr manager.Manager) (*targetStates, error) {
	if err := collector.Register(mgr, targetsGauge); err != nil {
		return nil, err
	}
	for _, s := range []string{readyState, workloadv1alpha1.ReasonUnreachable, workloadv1alpha1.ReasonNeverSeen} {
		targetsGauge.WithLabelValues(s).Set(0)
	}
	return &targetStates{states: map[string]string{}}, nil
}

// readyState is the gauge's name for a heartbeating target.
const readyState = "Ready"

// set records the target's state; an empty state forgets the target.
func (t *targetStates) set(target, state string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if old, ok := t.states[target]; ok {
		targetsGauge.WithLabelValues(old).Dec()
		delete(t.states, target)
	}
	if state != "" {
		t.states[target] = state
		targetsGauge.WithLabelValues(state).Inc()
	}
}

// collect reports, per target the health controller has judged, its state and since when.
func collect(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) error {
	targets := &workloadv1alpha1.SyncTargetList{}
	if err := r.List(ctx, targets, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	for _, t := range targets.Items {
		c := meta.FindStatusCondition(t.Status.Conditions, workloadv1alpha1.ConditionReady)
		if c == nil {
			continue
		}
		state := c.Reason
		if c.Status == metav1.ConditionTrue {
			state = readyState
		}
		ch <- cachemetrics.Timestamp(targetState, c.LastTransitionTime.Time, t.Name, state)
	}
	return nil
}
