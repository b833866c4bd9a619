package testbed

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BenchmarkHubAndTwoMembers starts a hub and two members, provisions claims in a member,
// and reports the start time and the peak memory of the bed's processes: with the members'
// nodes (the default) and without them (Options.NoNodes), so that the figures show what the
// nodes cost. With nodes, it also reports how long after the start every node was Ready and
// free of taints, which is when a member's pods can be scheduled. A third run puts the hub
// across three sites (Options.HubSites), for what that costs.
func BenchmarkHubAndTwoMembers(b *testing.B) {
	b.Run("nodes", func(b *testing.B) { benchmarkHubAndTwoMembers(b, TwoMembers()) })
	noNodes := TwoMembers()
	noNodes.NoNodes = true
	b.Run("no-nodes", func(b *testing.B) { benchmarkHubAndTwoMembers(b, noNodes) })
	acrossSites := TwoMembers()
	acrossSites.HubSites = 3
	b.Run("hub-across-3-sites", func(b *testing.B) { benchmarkHubAndTwoMembers(b, acrossSites) })
}

func benchmarkHubAndTwoMembers(b *testing.B, opts Options) {
	const claims = 50
	ctx := context.Background()
	for b.Loop() {
		start := time.Now()
		bed, err := Start(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		started := time.Since(start)
		var schedulable time.Duration
		if !opts.NoNodes {
			schedulable = waitSchedulable(ctx, b, bed) + started
		}
		m1 := bed.Member("m1")
		if err := m1.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}); err != nil {
			b.Fatal(err)
		}
		for i := range claims {
			if err := m1.Client.Create(ctx, benchClaim(i)); err != nil {
				b.Fatal(err)
			}
		}
		bound := waitBound(ctx, b, m1.Client, claims)
		var peak, procs uint64
		for _, p := range bed.Processes() {
			peak += p.PeakRSS
			procs++
		}
		self, _ := readProcess(os.Getpid())
		if err := bed.Stop(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(started.Seconds(), "start-s")
		b.ReportMetric(schedulable.Seconds(), "nodes-ready-s")
		b.ReportMetric(bound.Seconds(), "bind50-s")
		b.ReportMetric(float64(peak)/(1<<20), "control-plane-peak-MiB")
		b.ReportMetric(float64(self.PeakRSS)/(1<<20), "test-process-peak-MiB")
		b.ReportMetric(float64(procs), "processes")
	}
}

func benchClaim(i int) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("claim-%d", i)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("shared"),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
}

// waitBound waits until n claims in namespace bench are Bound and returns how long it took.
func waitBound(ctx context.Context, b *testing.B, c client.Client, n int) time.Duration {
	start := time.Now()
	for time.Since(start) < 5*time.Minute {
		list := &corev1.PersistentVolumeClaimList{}
		if err := c.List(ctx, list, client.InNamespace("bench")); err != nil {
			b.Fatal(err)
		}
		bound := 0
		for _, pvc := range list.Items {
			if pvc.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		if bound == n {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.Fatalf("%d claims not bound within 5 minutes", n)
	return 0
}

// waitSchedulable waits until every node of every member is Ready and has no taint, and
// returns how long it took.
func waitSchedulable(ctx context.Context, b *testing.B, bed *Bed) time.Duration {
	start := time.Now()
	for _, m := range bed.Members {
		for time.Since(start) < time.Minute {
			list := &corev1.NodeList{}
			if err := m.Client.List(ctx, list); err != nil {
				b.Fatal(err)
			}
			if len(list.Items) == m.Nodes() && allSchedulable(list.Items) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if d := time.Since(start); d < time.Minute {
		return d
	}
	b.Fatal("nodes not Ready and untainted within a minute")
	return 0
}

// allSchedulable tells whether every node is Ready and untainted.
func allSchedulable(nodes []corev1.Node) bool {
	for _, n := range nodes {
		if len(n.Spec.Taints) > 0 || !NodeReady(&n) {
			return false
		}
	}
	return true
}
