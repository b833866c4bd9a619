package volumes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// How often a benchmark looks while it waits: at its cache of the hub, where a look is
// cheap, and at an API server, where a look costs a list.
const (
	cachePoll = 100 * time.Millisecond
	apiPoll   = 2 * time.Second
)

// BenchmarkMove500OwnedVolumes provisions 500 owned volumes in one namespace, cordons their
// member, and reports how long it takes until every volume is Bound on the other member, and
// how many API writes (hub and members, heartbeats and events left out) each move cost;
// beside them the write floor of the same moves, measured in the same run (see writeFloor),
// and the ratio of the two. The goals: under 10 s, within 2x the floor, at most
// 10 writes per move.
func BenchmarkMove500OwnedVolumes(b *testing.B) {
	const volumes = 500
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		r := startRun(ctx, b, environment.OneLocation())
		c := r.Hub.Client
		ns := seedVolumes(ctx, b, c, volumes)
		from := waitOwners(ctx, b, r.cache, ns, volumes, "", inUse)
		floor := writeFloor(ctx, b, r, ns, environment.Other(from), volumes, true)
		clusters := r.clusters()
		settle(ctx, b, clusters)
		before := framework.Writes(ctx, b, clusters)
		start := time.Now()
		patchCordon(ctx, b, c, from)
		waitOwners(ctx, b, r.cache, ns, volumes, environment.Other(from), inUse)
		elapsed := time.Since(start)
		moved := framework.Writes(ctx, b, clusters).Since(before)
		r.stop(b)
		b.ReportMetric(elapsed.Seconds(), "move-s")
		b.ReportMetric(float64(volumes)/elapsed.Seconds(), "moves/s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(elapsed.Seconds()/floor.Seconds(), "move/floor")
		b.ReportMetric(float64(moved.Total())/volumes, "writes/move")
		b.Logf("writes per move, by cluster, verb, resource and code:\n%s", moved.PerVolume(volumes))
	}
}

// run is one benchmark run: a running environment and a cache of its hub, which the waits
// read so that watching costs the hub one watch per type instead of a list per look.
type run struct {
	*environment.Environment
	cache     cache.Cache
	stopCache context.CancelFunc
}

// startRun starts an environment, waits until its targets are Ready and starts the cache of
// its hub. Whatever ends the benchmark, stop runs.
func startRun(ctx context.Context, b *testing.B, o environment.Options) *run {
	e, err := environment.Start(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	r := &run{Environment: e, stopCache: func() {}}
	b.Cleanup(func() { r.stop(b) })
	if err := e.WaitReady(ctx); err != nil {
		b.Fatal(err)
	}
	if r.cache, err = cache.New(e.Hub.Config, cache.Options{Scheme: testbed.Scheme()}); err != nil {
		b.Fatal(err)
	}
	cacheCtx, cancel := context.WithCancel(ctx)
	r.stopCache = cancel
	go func() { _ = r.cache.Start(cacheCtx) }()
	return r
}

// stop stops the cache and the environment; it may run more than once.
func (r *run) stop(b *testing.B) {
	r.stopCache()
	if err := r.Stop(); err != nil {
		b.Fatal(err)
	}
}

// clusters are the hub and the members.
func (r *run) clusters() []*testbed.Cluster {
	return append([]*testbed.Cluster{r.Hub}, r.Members...)
}

func seedVolumes(ctx context.Context, b *testing.B, c client.Client, n int) string {
	ns := "bench"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{framework.AppLabel: ns}}},
		framework.Placement(ns, "loc"),
	}
	for i := range n {
		objs = append(objs, claimObject(ns, fmt.Sprintf("data-%03d", i), corev1.ReadWriteOnce))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	return ns
}

// waitOwners waits until every volume of the namespace is accepted on one owner (on want,
// when given) and returns that owner.
func waitOwners(ctx context.Context, b *testing.B, r client.Reader, ns string, n int, want string, accept func(storagev1alpha1.VolumeOwnershipStatus) bool) string {
	owner := ""
	poll(b, fmt.Sprintf("%d volumes of %s on one owner (%q)", n, ns, want), max(20*time.Minute, time.Duration(n)*200*time.Millisecond), cachePoll, func() bool {
		owner = soleOwner(ctx, b, r, ns, n, want, accept)
		return owner != ""
	})
	return owner
}

// soleOwner returns the owner on which all n volumes of the namespace are accepted (want,
// when given); "" while there is none.
func soleOwner(ctx context.Context, b *testing.B, r client.Reader, ns string, n int, want string, accept func(storagev1alpha1.VolumeOwnershipStatus) bool) string {
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := r.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		b.Fatal(err)
	}
	owners := map[string]int{}
	for _, vo := range list.Items {
		if accept(vo.Status) {
			owners[vo.Status.Owner]++
		}
	}
	for owner, count := range owners {
		if count == n && (want == "" || owner == want) {
			return owner
		}
	}
	return ""
}

// inUse accepts a volume Bound and held by its owner, in use there or moved there.
func inUse(st storagev1alpha1.VolumeOwnershipStatus) bool { return st.Settled() }

// boundPhase accepts a volume Bound on its owner, whether in use there or just moved there.
func boundPhase(st storagev1alpha1.VolumeOwnershipStatus) bool {
	return st.Phase == storagev1alpha1.Bound
}

// poll checks done every interval until it holds, and returns when it first did; the
// benchmark fails when that takes longer than within.
func poll(b *testing.B, what string, within, every time.Duration, done func() bool) time.Time {
	err := wait.PollUntilContextTimeout(context.Background(), every, within, true, func(context.Context) (bool, error) { return done(), nil })
	if err != nil {
		b.Fatalf("%s: not within %s", what, within)
	}
	return time.Now()
}

func patchCordon(ctx context.Context, b *testing.B, c client.Client, target string) {
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if err := c.Patch(ctx, targetObject(target), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		b.Fatal(err)
	}
}

// quietWrites is how few writes an API server may serve in an apiPoll for a bed to be quiet:
// a few stray ones (a heartbeat writes nothing but its Lease, which is not counted).
const quietWrites = 10

// settle waits until the clusters are quiet, so that what the benchmark times next does not
// share the bed with the tail of what came before.
func settle(ctx context.Context, b *testing.B, clusters []*testbed.Cluster) {
	last := -1
	poll(b, "a quiet bed", 10*time.Minute, apiPoll, func() bool {
		now := framework.Writes(ctx, b, clusters).Total()
		quiet := last >= 0 && now-last < quietWrites*len(clusters)
		last = now
		return quiet
	})
}
