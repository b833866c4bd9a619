package scheduling

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// BenchmarkSchedule2000Namespaces places 2,000 existing namespaces over 20 equal targets of
// one Location and reports the rate, the controllers' API writes per namespace and how even
// the spread is.
func BenchmarkSchedule2000Namespaces(b *testing.B) {
	const namespaces, targets = 2000, 20
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		bed, err := testbed.Start(ctx, testbed.Options{})
		if err != nil {
			b.Fatal(err)
		}
		hub := bed.Hub.Client
		seed(ctx, b, hub, namespaces, targets)

		var writes atomic.Int64
		cfg := rest.CopyConfig(bed.Hub.Config)
		cfg.QPS, cfg.Burst = 500, 1000
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Scheme:                 testbed.Scheme(),
			Metrics:                metricsserver.Options{BindAddress: "0"},
			HealthProbeBindAddress: "0",
			NewClient: func(config *rest.Config, options client.Options) (client.Client, error) {
				c, err := client.NewWithWatch(config, options)
				return interceptor.NewClient(c, countWrites(&writes)), err
			},
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := controllers.Setup(mgr, controllers.Options{}); err != nil {
			b.Fatal(err)
		}
		mgrCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		start := time.Now()
		go func() { done <- mgr.Start(mgrCtx) }()
		loads := waitPlaced(ctx, b, hub, namespaces)
		elapsed := time.Since(start)
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		if err := bed.Stop(); err != nil {
			b.Fatal(err)
		}
		lo, hi := math.MaxInt, 0
		for _, n := range loads {
			lo, hi = min(lo, n), max(hi, n)
		}
		if len(loads) != targets || hi-lo > 1 {
			b.Fatalf("uneven spread over %d targets: %v", len(loads), loads)
		}
		b.ReportMetric(float64(namespaces)/elapsed.Seconds(), "namespaces/s")
		b.ReportMetric(float64(writes.Load())/namespaces, "writes/namespace")
		b.ReportMetric(float64(hi-lo), "spread")
	}
}

func seed(ctx context.Context, b *testing.B, hub client.Client, namespaces, targets int) {
	for i := range targets {
		t := &workloadv1alpha1.SyncTarget{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%02d", i), Labels: map[string]string{"loc": "bench"}},
			Spec:       workloadv1alpha1.SyncTargetSpec{Priority: 1},
		}
		if err := hub.Create(ctx, t); err != nil {
			b.Fatal(err)
		}
		if err := environment.Heartbeat(ctx, hub, t.Name, true); err != nil {
			b.Fatal(err)
		}
	}
	objs := []client.Object{
		&schedulingv1alpha1.Location{
			ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{"loc": "bench"}},
			Spec:       schedulingv1alpha1.LocationSpec{InstanceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"loc": "bench"}}},
		},
		&schedulingv1alpha1.Placement{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec: schedulingv1alpha1.PlacementSpec{
				LocationName:      "bench",
				NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"bench": "yes"}},
			},
		},
	}
	for i := range namespaces {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%04d", i), Labels: map[string]string{"bench": "yes"}}})
	}
	for _, o := range objs {
		if err := hub.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
}

// waitPlaced waits until every benchmark namespace is on one target and returns the load of
// each target.
func waitPlaced(ctx context.Context, b *testing.B, hub client.Client, namespaces int) map[string]int {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		list := &corev1.NamespaceList{}
		if err := hub.List(ctx, list, client.MatchingLabels{"bench": "yes"}); err != nil {
			b.Fatal(err)
		}
		loads, placed := map[string]int{}, 0
		for _, ns := range list.Items {
			if on := workloadv1alpha1.ActiveTargets(&ns); len(on) == 1 {
				loads[on[0]]++
				placed++
			}
		}
		if placed == namespaces {
			return loads
		}
		time.Sleep(250 * time.Millisecond)
	}
	b.Fatal("namespaces not placed within 10 minutes")
	return nil
}

func countWrites(n *atomic.Int64) interceptor.Funcs {
	return interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			n.Add(1)
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			n.Add(1)
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			n.Add(1)
			return c.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			n.Add(1)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			n.Add(1)
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
	}
}
