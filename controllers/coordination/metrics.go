package coordination

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/cachemetrics"
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
	failoverDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "custody_volume_failover_duration_seconds",
		Help:    "Time from an owned volume's owner becoming Unreachable to the volume being bound on its next owner; a lost member's failover ends with its slowest volume.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	waitingGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "custody_volumes_waiting_for_fence",
		Help: "Owned volumes whose lost owner must be fenced before they move, by reason.",
	}, []string{"reason"})
	movingSince = prometheus.NewDesc("custody_volume_moving_since_timestamp_seconds",
		"When the volume that has been Moving longest, of those leaving an owner (the owner label, a target key), began to move.", []string{"owner"}, nil)
	movingCollector = cachemetrics.New("coordination", collectMoving, movingSince)
	registerOnce    sync.Once
)

// collectMoving reports, per owner that volumes are leaving, since when the oldest of them is
// Moving: one series per target, however many volumes move.
func collectMoving(ctx context.Context, r client.Reader, ch chan<- prometheus.Metric) error {
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := r.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	oldest := map[string]time.Time{}
	for i := range list.Items {
		st := &list.Items[i].Status
		if st.Phase != storagev1alpha1.Moving || st.PhaseSince == nil {
			continue
		}
		if t, ok := oldest[st.Owner]; !ok || st.PhaseSince.Time.Before(t) {
			oldest[st.Owner] = st.PhaseSince.Time
		}
	}
	for owner, t := range oldest {
		ch <- cachemetrics.Timestamp(movingSince, t, owner)
	}
	return nil
}

// waitingReasons are the reasons of a volume that waits for a Fence of its owner.
var waitingReasons = []string{
	storagev1alpha1.ReasonWaitingForFence, storagev1alpha1.ReasonFenceFailed, storagev1alpha1.ReasonOwnerLostNoFencing, storagev1alpha1.ReasonFencingUnverified,
}

// failedReasons are the reasons that stop a move.
var failedReasons = map[string]bool{
	storagev1alpha1.ReasonStorageClassMismatch:     true,
	storagev1alpha1.ReasonInternalVolumeCannotMove: true,
	storagev1alpha1.ReasonDomainUnreachable:        true,
	storagev1alpha1.ReasonStorageClassMissing:      true,
}

// bucket is where a claim counts: its class and phase, and the reason it waits for a Fence
// ("" when it does not).
type bucket struct{ class, phase, waiting string }

// volumeMetrics keeps the bucket of each claim, so that the gauges count each claim once.
type volumeMetrics struct {
	mu      sync.Mutex
	claims  map[types.NamespacedName]bucket
	phases  map[bucket]int
	waiting map[string]int
}

func newVolumeMetrics() *volumeMetrics {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(volumesGauge, movesStarted, movesCompleted, movesFailed, moveDuration, failoverDuration, waitingGauge)
	})
	for _, r := range waitingReasons {
		waitingGauge.WithLabelValues(r).Set(0)
	}
	return &volumeMetrics{claims: map[types.NamespacedName]bucket{}, phases: map[bucket]int{}, waiting: map[string]int{}}
}

// count puts the claim in the bucket of its status.
func (m *volumeMetrics) count(key types.NamespacedName, st storagev1alpha1.VolumeOwnershipStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := bucket{class: string(st.Class), phase: string(st.Phase)}
	if slices.Contains(waitingReasons, st.Reason) {
		b.waiting = st.Reason
	}
	m.move(key, b, true)
}

func (m *volumeMetrics) forget(key types.NamespacedName) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.move(key, bucket{}, false)
}

// move takes the claim out of its old bucket and, if present, into the new one.
func (m *volumeMetrics) move(key types.NamespacedName, to bucket, present bool) {
	if from, ok := m.claims[key]; ok {
		m.add(from, -1)
		delete(m.claims, key)
	}
	if present {
		m.claims[key] = to
		m.add(to, 1)
	}
}

// add adds n claims to the bucket b and sets the gauges it counts in.
func (m *volumeMetrics) add(b bucket, n int) {
	phase := bucket{class: b.class, phase: b.phase}
	m.phases[phase] += n
	volumesGauge.WithLabelValues(b.class, b.phase).Set(float64(m.phases[phase]))
	if b.waiting != "" {
		m.waiting[b.waiting] += n
		waitingGauge.WithLabelValues(b.waiting).Set(float64(m.waiting[b.waiting]))
	}
}

// transition counts the moves a change of status starts, completes or stops; lostSince is
// when the previous owner became Unreachable, zero while it answers.
func (m *volumeMetrics) transition(before, after storagev1alpha1.VolumeOwnershipStatus, lostSince time.Time) {
	moving := before.Phase == storagev1alpha1.Moving
	// A volume handed over from a fenced owner in one step starts and completes its move.
	moved := after.Phase == storagev1alpha1.Bound && after.Reason == storagev1alpha1.ReasonMoved && (moving || before.Owner != after.Owner)
	if !moving && (after.Phase == storagev1alpha1.Moving || moved) {
		movesStarted.Inc()
	}
	if moved {
		movesCompleted.Inc()
		if moving && before.PhaseSince != nil {
			moveDuration.Observe(time.Since(before.PhaseSince.Time).Seconds())
		}
		if slices.Contains(after.FencedOff, before.Owner) && !lostSince.IsZero() {
			failoverDuration.Observe(time.Since(lostSince).Seconds())
		}
	}
	if failedReasons[after.Reason] && before.Reason != after.Reason {
		movesFailed.WithLabelValues(after.Reason).Inc()
	}
}
