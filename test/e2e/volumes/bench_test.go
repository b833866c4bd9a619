package volumes

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// BenchmarkMove500OwnedVolumes provisions 500 owned volumes in one namespace, cordons their
// member, and reports how long it takes until every volume is Bound on the other member, and
// how many API writes (hub and members, heartbeats and events left out) each move cost.
func BenchmarkMove500OwnedVolumes(b *testing.B) {
	const volumes = 500
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		e, err := environment.Start(ctx, environment.OneLocation())
		if err != nil {
			b.Fatal(err)
		}
		if err := e.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		c := e.Hub.Client
		ns := seedVolumes(ctx, b, c, volumes)
		from := waitOwners(ctx, b, c, ns, volumes, "")
		before := writes(ctx, b, e)
		start := time.Now()
		patchCordon(ctx, b, c, from)
		waitOwners(ctx, b, c, ns, volumes, other(from))
		elapsed := time.Since(start)
		moved := writes(ctx, b, e) - before
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(elapsed.Seconds(), "move-s")
		b.ReportMetric(float64(volumes)/elapsed.Seconds(), "moves/s")
		b.ReportMetric(float64(moved)/volumes, "writes/move")
	}
}

func seedVolumes(ctx context.Context, b *testing.B, c client.Client, n int) string {
	ns := "bench"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app": ns}}},
		placementFor(ns, "loc"),
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

// waitOwners waits until every volume of the namespace is Bound on one owner (on want, when
// given) and returns that owner.
func waitOwners(ctx context.Context, b *testing.B, c client.Client, ns string, n int, want string) string {
	deadline := time.Now().Add(20 * time.Minute)
	for time.Now().Before(deadline) {
		list := &storagev1alpha1.VolumeOwnershipList{}
		if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		owners := map[string]int{}
		for _, vo := range list.Items {
			if vo.Status.Phase == storagev1alpha1.Bound && vo.Status.Reason == storagev1alpha1.ReasonInUse {
				owners[vo.Status.Owner]++
			}
		}
		for owner, count := range owners {
			if count == n && (want == "" || owner == want) {
				return owner
			}
		}
		time.Sleep(time.Second)
	}
	b.Fatalf("volumes not Bound on one owner (%q) within 20 minutes", want)
	return ""
}

func patchCordon(ctx context.Context, b *testing.B, c client.Client, target string) {
	patch := []byte(`{"spec":{"unschedulable":true}}`)
	if err := c.Patch(ctx, targetObject(target), client.RawPatch("application/merge-patch+json", patch)); err != nil {
		b.Fatal(err)
	}
}

// writes sums the write requests the hub's and the members' API servers served, leaving
// out heartbeat Leases and events.
func writes(ctx context.Context, b *testing.B, e *environment.Environment) int {
	total := 0
	for _, cl := range append([]*testbed.Cluster{e.Hub}, e.Members...) {
		cs, err := kubernetes.NewForConfig(cl.Config)
		if err != nil {
			b.Fatal(err)
		}
		raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			b.Fatal(err)
		}
		total += countWrites(string(raw))
	}
	return total
}

func countWrites(metrics string) int {
	total := 0
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") || strings.Contains(line, `resource="leases"`) ||
			strings.Contains(line, `resource="events"`) {
			continue
		}
		if !strings.Contains(line, `verb="POST"`) && !strings.Contains(line, `verb="PUT"`) &&
			!strings.Contains(line, `verb="PATCH"`) && !strings.Contains(line, `verb="DELETE"`) {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			total += int(v)
		}
	}
	return total
}
