package coordination

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

var (
	volumesGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "custody_volumes",
		Help: "Hub claims coordinated, by volume class and phase.",
	}, []string{"class", "phase"})
	movesStarted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "custody_volume_moves_started_total",
		Help: "Owned volumes that started to leave their owner.",
	})
	movesCompleted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "custody_volume_moves_completed_total",
		Help: "Owned volumes given to a new owner after the old one let go.",
	})
	movesFailed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_volume_moves_failed_total",
		Help: "Moves refused or stuck, by reason.",
	}, []string{"reason"})
	moveDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "custody_volume_move_duration_seconds",
		Help:    "Time from a volume leaving its owner to its new owner getting it.",
		Buckets: prometheus.ExponentialBuckets(0.25, 2, 14),
	})
	registerOnce sync.Once
)

// failedReasons are the reasons that stop a move.
var failedReasons = map[string]bool{
	storagev1alpha1.ReasonStorageClassMismatch:     true,
	storagev1alpha1.ReasonInternalVolumeCannotMove: true,
	storagev1alpha1.ReasonDomainUnreachable:        true,
	storagev1alpha1.ReasonStorageClassMissing:      true,
}

type bucket struct{ class, phase string }

// volumeMetrics keeps the class and phase of each claim, so that the gauge counts each
// claim once.
type volumeMetrics struct {
	mu     sync.Mutex
	claims map[types.NamespacedName]bucket
	counts map[bucket]int
}

func newVolumeMetrics() *volumeMetrics {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(volumesGauge, movesStarted, movesCompleted, movesFailed, moveDuration)
	})
	return &volumeMetrics{claims: map[types.NamespacedName]bucket{}, counts: map[bucket]int{}}
}

// count puts the claim in the bucket of its class and phase.
func (m *volumeMetrics) count(key types.NamespacedName, st storagev1alpha1.VolumeOwnershipStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.move(key, bucket{string(st.Class), string(st.Phase)}, true)
}

func (m *volumeMetrics) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.move(key, bucket{}, false)
}

// move takes the claim out of its old bucket and, if present, into the new one.
func (m *volumeMetrics) move(key types.NamespacedName, to bucket, present bool) {
	if from, ok := m.claims[key]; ok {
		m.counts[from]--
		volumesGauge.WithLabelValues(from.class, from.phase).Set(float64(m.counts[from]))
		delete(m.claims, key)
	}
	if present {
		m.claims[key] = to
		m.counts[to]++
		volumesGauge.WithLabelValues(to.class, to.phase).Set(float64(m.counts[to]))
	}
}

// transition counts the moves a change of status starts, completes or stops.
func (m *volumeMetrics) transition(before, after storagev1alpha1.VolumeOwnershipStatus) {
	switch {
	case before.Phase != storagev1alpha1.Moving && after.Phase == storagev1alpha1.Moving:
		movesStarted.Inc()
	case before.Phase == storagev1alpha1.Moving && after.Phase == storagev1alpha1.Bound && after.Reason == storagev1alpha1.ReasonMoved:
		movesCompleted.Inc()
		if before.PhaseSince != nil {
			moveDuration.Observe(time.Since(before.PhaseSince.Time).Seconds())
		}
	}
	if failedReasons[after.Reason] && before.Reason != after.Reason {
		movesFailed.WithLabelValues(after.Reason).Inc()
	}
}
