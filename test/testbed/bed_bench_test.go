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
// and reports the start time and the peak memory of the bed's processes.
func BenchmarkHubAndTwoMembers(b *testing.B) {
	const claims = 50
	ctx := context.Background()
	for b.Loop() {
		start := time.Now()
		bed, err := Start(ctx, TwoMembers())
		if err != nil {
			b.Fatal(err)
		}
		started := time.Since(start)
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
