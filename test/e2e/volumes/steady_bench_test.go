package volumes

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

// steadyClaims is how many claims the steady-state benchmark holds, all on one member of the
// bed's two: the goal's ten members do not fit this machine's two cores beside the hub.
const steadyClaims = 10000

// BenchmarkSteadyState10000Claims binds 10,000 owned volumes on one member of a Location of
// two, lets the bed settle, and reports:
//
//   - rest-writes/min: the API writes of the hub and the members in a minute at rest,
//     heartbeat Leases and events left out (goal: zero);
//   - max-renewal-gap-s: the longest time between two renewals of the owner's heartbeat
//     Lease in that minute (floor: the heartbeat period, 1 s);
//   - rss-MB and heap-MB: the resident memory and Go heap in use of the process that runs the
//     controller, the other syncer and the simulated storage, after a garbage collection;
//   - controller-rss-MB and controller-heap-MB: what the controller holds of those, measured
//     as what the process holds less what it holds once the controller stopped (goal: under
//     300 MB);
//   - syncer-rss-MB and syncer-heap-MB: the resident set and the Go heap in use, after a
//     garbage collection, of the owner's syncer, run for this as a process of its own
//     (syncerProcess) once the controller's resync is over, and measured once the bed is
//     quiet again (goal: under 150 MB); its heap profile is written to syncerHeapProfile;
//   - controller-resync-s and syncer-resync-s: from the start of a restarted controller (or of
//     the owner's syncer process) until it reconciled every claim and its queue is empty,
//     and the writes from its stop until then (resync-writes, goal: zero).
func BenchmarkSteadyState10000Claims(b *testing.B) {
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		r := startRun(ctx, b, environment.OneLocation())
		began := time.Now()
		ns := seedVolumes(ctx, b, r.Hub.Client, steadyClaims)
		owner := waitOwners(ctx, b, r.cache, ns, steadyClaims, "", inUse)
		seeded := time.Since(began)
		clusters := r.clusters()
		settle(ctx, b, clusters)

		before := framework.Writes(ctx, b, clusters)
		gap := renewalGaps(ctx, b, r.Hub.Client, owner, time.Minute)
		rest := framework.Writes(ctx, b, clusters).Since(before)
		process := memory(b)
		b.Logf("%d claims bound on %s after %.0fs", steadyClaims, owner, seeded.Seconds())

		var controllerHeld held
		controller := resync(ctx, b, r, "coordination", gathered,
			func() error { controllerHeld = heldBy(b, r.StopController); return nil }, r.StartController)
		binary := buildSyncer(b, r)
		var p *syncerProcess
		syncer := resync(ctx, b, r, "downsync-persistentvolumeclaim", func(b *testing.B, family, label, value string) float64 {
			return p.gathered(b, family, label, value)
		}, func() error { return r.StopSyncer(owner) }, func() error { p = startSyncerProcess(b, r, binary, owner); return nil })
		settle(ctx, b, clusters)
		syncerHeld := p.memory(b, syncerHeapProfile)
		proc := p.process(b, r)
		b.Logf("the owner's syncer: resident set %.0f MB, of which %.0f MB its own memory and the rest pages of its binary; peak %.0f MB; heap profile in %s",
			mb(proc.RSS), mb(proc.AnonRSS), mb(proc.PeakRSS), syncerHeapProfile)
		p.stop()
		r.stop(b)

		b.ReportMetric(float64(rest.Total()), "rest-writes/min")
		b.ReportMetric(gap.Seconds(), "max-renewal-gap-s")
		b.ReportMetric(process.rss, "rss-MB")
		b.ReportMetric(process.heap, "heap-MB")
		b.ReportMetric(controllerHeld.rss, "controller-rss-MB")
		b.ReportMetric(controllerHeld.heap, "controller-heap-MB")
		b.ReportMetric(syncerHeld.rss, "syncer-rss-MB")
		b.ReportMetric(syncerHeld.heap, "syncer-heap-MB")
		b.ReportMetric(controller.took.Seconds(), "controller-resync-s")
		b.ReportMetric(syncer.took.Seconds(), "syncer-resync-s")
		b.ReportMetric(float64(controller.writes.Total()+syncer.writes.Total()), "resync-writes")
		b.Logf("writes at rest in a minute:\n%s", rest.PerVolume(1))
		b.Logf("writes of the controller's resync:\n%s\nof the syncer's:\n%s", controller.writes.PerVolume(1), syncer.writes.PerVolume(1))
	}
}

// renewalGaps watches the heartbeat Lease of target for d and returns the longest time
// between two of its renewals.
func renewalGaps(ctx context.Context, b *testing.B, hub client.Client, target string, d time.Duration) time.Duration {
	var last time.Time
	var longest time.Duration
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		lease := &coordinationv1.Lease{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: target}, lease); err != nil {
			b.Fatal(err)
		}
		renewed := lease.Spec.RenewTime.Time
		if !last.IsZero() && renewed.After(last) {
			longest = max(longest, renewed.Sub(last))
		}
		last = renewed
	}
	return longest
}

// mb is bytes in MB.
func mb(bytes uint64) float64 { return float64(bytes) / (1 << 20) }

// syncerHeapProfile is where the benchmark writes the heap profile of the owner's syncer.
var syncerHeapProfile = filepath.Join(os.TempDir(), "custody-steady-syncer.heap.pprof")

// restart is what one restart's resync took.
type restart struct {
	took   time.Duration
	writes framework.WriteCounts
}

// held is memory in MB: a resident set and a Go heap in use.
type held struct{ rss, heap float64 }

// less is what h holds beyond other.
func (h held) less(other held) held { return held{rss: h.rss - other.rss, heap: h.heap - other.heap} }

// counter sums a metric family over the series whose label is value, in the process that
// runs a part.
type counter func(b *testing.B, family, label, value string) float64

// resync stops a part of a quiet bed, starts it again at once (before a stopped syncer's
// target could turn Unreachable), and waits until its controller named name reconciled every
// claim since the start and has nothing queued, as count tells.
func resync(ctx context.Context, b *testing.B, r *run, name string, count counter, stop, start func() error) restart {
	clusters := r.clusters()
	settle(ctx, b, clusters)
	w := framework.Writes(ctx, b, clusters)
	if err := stop(); err != nil {
		b.Fatal(err)
	}
	before := count(b, "controller_runtime_reconcile_total", "controller", name)
	began := time.Now()
	if err := start(); err != nil {
		b.Fatal(err)
	}
	poll(b, name+" reconciled every claim again", 10*time.Minute, cachePoll, func() bool {
		return count(b, "controller_runtime_reconcile_total", "controller", name)-before >= steadyClaims &&
			count(b, "workqueue_depth", "name", name) == 0
	})
	return restart{took: time.Since(began), writes: framework.Writes(ctx, b, clusters).Since(w)}
}

// gathered sums the process's metric family over the series whose label is value.
func gathered(b *testing.B, family, label, value string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		b.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != family {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return sum
}

// heldBy stops a part and returns what the process held before the stop less what it holds
// after it: what the part held.
func heldBy(b *testing.B, stop func() error) held {
	with := memory(b)
	if err := stop(); err != nil {
		b.Fatal(err)
	}
	return with.less(memory(b))
}

// memory is the process's resident set and Go heap in use, in MB, after a collection that
// returned what it freed to the system.
func memory(b *testing.B) held {
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h := held{heap: mb(m.HeapInuse)}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				b.Fatal(err)
			}
			h.rss = kb / 1024
		}
	}
	return h
}
