package syncer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/testbed"
)

// sighting is a downstream ConfigMap seen at a revision.
type sighting struct {
	name, rev string
	at        time.Time
}

// BenchmarkSyncer measures one syncer between a hub and a member: how many objects per
// second it syncs down when it starts on a namespace full of them (its start included), and
// the latency from a change on the hub to the same change in the member, one change at a
// time, as p50 and p99.
func BenchmarkSyncer(b *testing.B) {
	const (
		objects = 500
		changes = 200
	)
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	for b.Loop() {
		bed, err := testbed.Start(ctx, testbed.Options{Members: []testbed.MemberOptions{{Name: "m1", Domains: []string{"shared"}}}})
		if err != nil {
			b.Fatal(err)
		}
		member := bed.Member("m1")
		// The bench's own writes must not wait on client-side throttling, or it measures that.
		unthrottled := rest.CopyConfig(bed.Hub.Config)
		unthrottled.QPS, unthrottled.Burst = 1000, 1000
		hub, err := client.New(unthrottled, client.Options{Scheme: testbed.Scheme()})
		if err != nil {
			b.Fatal(err)
		}
		kubeSystem := &corev1.Namespace{}
		if err := hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
			b.Fatal(err)
		}
		if err := hub.Create(ctx, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}); err != nil {
			b.Fatal(err)
		}
		labels := map[string]string{workloadv1alpha1.StateLabel("m1"): string(workloadv1alpha1.ResourceStateSync)}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: labels}}
		if err := hub.Create(ctx, ns); err != nil {
			b.Fatal(err)
		}
		g := new(errgroup.Group)
		g.SetLimit(8)
		for i := range objects {
			g.Go(func() error {
				return hub.Create(ctx, &corev1.ConfigMap{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: fmt.Sprintf("cm-%d", i), Labels: labels},
					Data:       map[string]string{"rev": "0"},
				})
			})
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}

		downNS := transform.Target{Key: "m1", Hub: string(kubeSystem.UID)}.Namespace(ns.Name)
		seen, stopWatching := watchConfigMaps(b, member, downNS)
		syncCtx, stopSyncer := context.WithCancel(ctx)
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			done <- syncer.Run(syncCtx, syncer.Options{HubConfig: bed.Hub.Config, MemberConfig: member.Config, SyncTargetName: "m1"})
		}()
		synced := map[string]bool{}
		for len(synced) < objects {
			s := next(b, seen)
			synced[s.name] = true
		}
		throughput := float64(objects) / time.Since(start).Seconds()

		latencies := make([]time.Duration, 0, changes)
		for i := 1; i <= changes; i++ {
			name, rev := fmt.Sprintf("cm-%d", i%objects), strconv.Itoa(i)
			sent := time.Now()
			if err := hub.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: name}},
				client.RawPatch("application/merge-patch+json", fmt.Appendf(nil, `{"data":{"rev":%q}}`, rev))); err != nil {
				b.Fatal(err)
			}
			s := next(b, seen)
			for s.name != name || s.rev != rev {
				s = next(b, seen)
			}
			latencies = append(latencies, s.at.Sub(sent))
		}

		stopSyncer()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		stopWatching()
		if err := bed.Stop(); err != nil {
			b.Fatal(err)
		}
		slices.Sort(latencies)
		b.ReportMetric(throughput, "objects/s")
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// watchConfigMaps reports every ConfigMap revision that appears in the member's namespace.
func watchConfigMaps(b *testing.B, member *testbed.Cluster, namespace string) (<-chan sighting, func()) {
	seen := make(chan sighting, 4096)
	factory := informers.NewSharedInformerFactoryWithOptions(kubernetes.NewForConfigOrDie(member.Config), 0, informers.WithNamespace(namespace))
	report := func(obj any) {
		cm := obj.(*corev1.ConfigMap)
		seen <- sighting{name: cm.Name, rev: cm.Data["rev"], at: time.Now()}
	}
	if _, err := factory.Core().V1().ConfigMaps().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: report, UpdateFunc: func(_, obj any) { report(obj) },
	}); err != nil {
		b.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	return seen, func() { close(stop); factory.Shutdown() }
}

// next waits for the next sighting, for at most five minutes.
func next(b *testing.B, seen <-chan sighting) sighting {
	select {
	case s := <-seen:
		return s
	case <-time.After(5 * time.Minute):
		b.Fatal("no downstream change within five minutes")
		return sighting{}
	}
}
