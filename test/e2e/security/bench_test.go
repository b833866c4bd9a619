package security

import (
	"bufio"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/environment"
)

// BenchmarkPlace200Namespaces measures what a syncer's reads cost as the hub grants them:
// one member, with the identity join made for it, takes 200 namespaces of one ConfigMap each
// from one Placement. It reports the time from the Placement to every copy in the member, the
// time from a namespace made (selected by the Placement) to its ConfigMap's copy, one
// namespace at a time, the hub's open watches before and after, and the heap of the process
// (the controller and the syncer) after a GC.
func BenchmarkPlace200Namespaces(b *testing.B) {
	const namespaces, singles = 200, 20
	ctrl.SetLogger(logr.Discard())
	ctx := context.Background()
	for b.Loop() {
		env, err := environment.Start(ctx, environment.Options{Locations: []environment.LocationOptions{{Name: "loc", Domain: "shared", Members: []string{"m1"}}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := env.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		hub, member := env.Hub.Client, env.Member("m1").Client
		kube := &corev1.Namespace{}
		if err := hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kube); err != nil {
			b.Fatal(err)
		}
		target := transform.Target{Key: "m1", Hub: string(kube.UID)}
		before := watches(ctx, b, env)

		g := new(errgroup.Group)
		g.SetLimit(8)
		for i := range namespaces {
			g.Go(func() error { return withConfigMap(ctx, hub, fmt.Sprintf("bench-%d", i)) })
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
		placed := time.Now()
		if err := hub.Create(ctx, &schedulingv1alpha1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec: schedulingv1alpha1.PlacementSpec{
				LocationName:      "loc",
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}},
			},
		}); err != nil {
			b.Fatal(err)
		}
		for i := range namespaces {
			waitCopy(ctx, b, member, target, fmt.Sprintf("bench-%d", i))
		}
		all := time.Since(placed)

		var latencies []time.Duration
		for i := range singles {
			name := fmt.Sprintf("single-%d", i)
			start := time.Now()
			if err := withConfigMap(ctx, hub, name); err != nil {
				b.Fatal(err)
			}
			waitCopy(ctx, b, member, target, name)
			latencies = append(latencies, time.Since(start))
		}
		slices.Sort(latencies)
		after := watches(ctx, b, env)
		runtime.GC()
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(all.Seconds(), "s-to-sync-200")
		b.ReportMetric(float64(latencies[len(latencies)/2].Milliseconds()), "ms-namespace-to-copy-p50")
		b.ReportMetric(float64(latencies[len(latencies)-1].Milliseconds()), "ms-namespace-to-copy-max")
		b.ReportMetric(float64(before), "hub-watches-before")
		b.ReportMetric(float64(after), "hub-watches-after")
		b.ReportMetric(float64(mem.HeapInuse)/(1<<20), "heap-MiB")
	}
}

// withConfigMap makes a namespace that the Placement "bench" selects, with one ConfigMap.
func withConfigMap(ctx context.Context, hub client.Client, name string) error {
	if err := hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"bench": "yes"}}}); err != nil {
		return err
	}
	return hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "settings"}, Data: map[string]string{"a": "b"}})
}

// waitCopy waits, for at most five minutes, until the member holds the copy of the
// ConfigMap of the namespace.
func waitCopy(ctx context.Context, b *testing.B, member client.Client, target transform.Target, ns string) {
	key := client.ObjectKey{Namespace: target.Namespace(ns), Name: "settings"}
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		return member.Get(ctx, key, &corev1.ConfigMap{}) == nil, nil
	})
	if err != nil {
		b.Fatalf("no copy of %s/settings: %v", ns, err)
	}
}

// watches is the number of watches the hub's API server serves, of every client.
func watches(ctx context.Context, b *testing.B, env *environment.Environment) int {
	raw, err := kubernetes.NewForConfigOrDie(env.Hub.Config).RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_longrunning_requests{") || !strings.Contains(line, `verb="WATCH"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
		if err == nil {
			n += int(v)
		}
	}
	return n
}
