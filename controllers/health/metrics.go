package health

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

var (
	targetsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "custody_targets",
		Help: "SyncTargets by health: Ready, Unreachable or NeverSeen.",
	}, []string{"state"})
	registerOnce sync.Once
)

// targetStates remembers each target's last verdict, so that the gauge counts each once.
type targetStates struct {
	mu     sync.Mutex
	states map[string]string
}

func newTargetStates() *targetStates {
	registerOnce.Do(func() { metrics.Registry.MustRegister(targetsGauge) })
	for _, s := range []string{readyState, workloadv1alpha1.ReasonUnreachable, workloadv1alpha1.ReasonNeverSeen} {
		targetsGauge.WithLabelValues(s).Set(0)
	}
	return &targetStates{states: map[string]string{}}
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
