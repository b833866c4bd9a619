package dr

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/coordination/dr"
	"github.com/custody-dev/custody/test/environment"
)

// benchThreshold is the benchmark pair's failover threshold.
const benchThreshold = 5 * time.Second

// BenchmarkLocationFailover100Volumes binds 100 owned volumes of one namespace in Location
// east (member m1), protects them with a LocationPair to west (m2), and stops m1's syncer and
// API server. It reports, from the stop, when the pair's failover started (start-s: the
// target's grace and the pair's threshold of 5 s) and when every volume was bound in west
// again (total-s); the restore itself, from the failover's start (restore-s); and the floor
// measured in the same run before the stop: the time m2's API server and storage take to
// bind 100 claims made in m2 directly from the same replicas, 16 at a time (floor-s), with
// the ratio restore-s / floor-s.
func BenchmarkLocationFailover100Volumes(b *testing.B) {
	const volumes = 100
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		e, err := environment.Start(ctx, environment.Options{VolSync: true, Locations: []environment.LocationOptions{
			{Name: "east", Domain: "east", Members: []string{"m1"}},
			{Name: "west", Domain: "west", Members: []string{"m2"}},
		}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = e.Stop() })
		if err := e.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		c := e.Hub.Client
		ns := benchClaims(ctx, b, c, volumes)
		pair := &schedulingv1alpha1.LocationPair{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Spec: schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "1h",
				FailoverThreshold: &metav1.Duration{Duration: benchThreshold}},
		}
		if err := c.Create(ctx, pair); err != nil {
			b.Fatal(err)
		}
		replicas := waitFor(b, "every volume replicated", func() (map[string]string, bool) {
			out := map[string]string{}
			for _, vo := range ownerships(ctx, b, c, ns) {
				if r := vo.Status.Replica; r != nil {
					out[vo.Name] = r.Snapshot
				}
			}
			return out, len(out) == volumes
		})
		floor := restoreFloor(ctx, b, e, ns, replicas)

		stop := time.Now()
		if err := e.StopMember("m1", false); err != nil {
			b.Fatal(err)
		}
		started := waitFor(b, "the failover's start", func() (time.Duration, bool) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(pair), pair); err != nil {
				b.Fatal(err)
			}
			return time.Since(stop), pair.Status.LastAction != nil
		})
		total := waitFor(b, "every volume bound in west", func() (time.Duration, bool) {
			if err := c.Get(ctx, client.ObjectKeyFromObject(pair), pair); err != nil {
				b.Fatal(err)
			}
			return time.Since(stop), pair.Status.LastAction.Progression == dr.Completed
		})
		for _, vo := range ownerships(ctx, b, c, ns) {
			if vo.Status.Phase != storagev1alpha1.Bound || vo.Status.Owner != "m2" || vo.Status.RestoredFrom == nil {
				b.Fatalf("volume %s is %s on %s, restored from %v", vo.Name, vo.Status.Phase, vo.Status.Owner, vo.Status.RestoredFrom)
			}
		}
		if err := e.Storage("west").CheckWrites(); err != nil {
			b.Fatal(err)
		}
		restore := total - started
		b.ReportMetric(started.Seconds(), "start-s")
		b.ReportMetric(total.Seconds(), "total-s")
		b.ReportMetric(restore.Seconds(), "restore-s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(restore.Seconds()/floor.Seconds(), "restore/floor")
		b.Logf("%d volumes failed over from east to west: the failover started %s after the stop (grace and threshold %s), every volume was bound in west %s after it; the restore took %s, the floor %s (%.1fx)",
			volumes, started.Round(time.Millisecond), benchThreshold, total.Round(time.Millisecond), restore.Round(time.Millisecond), floor.Round(time.Millisecond), restore.Seconds()/floor.Seconds())
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchClaims makes a namespace placed in east with n claims, and waits until each is bound
// on m1.
func benchClaims(ctx context.Context, b *testing.B, c client.Client, n int) string {
	ns := "bench"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app": ns}}},
		&schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: schedulingv1alpha1.PlacementSpec{LocationName: "east",
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": ns}}}},
	}
	for i := range n {
		objs = append(objs, claimOf(ns, fmt.Sprintf("data-%03d", i), nil))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	waitFor(b, "every volume bound on m1", func() (struct{}, bool) {
		bound := 0
		for _, vo := range ownerships(ctx, b, c, ns) {
			if vo.Status.Phase == storagev1alpha1.Bound && vo.Status.Owner == "m1" {
				bound++
			}
		}
		return struct{}{}, bound == n
	})
	return ns
}

// restoreFloor makes, in m2's copy of ns, a claim from each replica, 16 at a time, and
// returns how long it took until every one was bound; the claims go after.
func restoreFloor(ctx context.Context, b *testing.B, e *environment.Environment, ns string, replicas map[string]string) time.Duration {
	kubeSystem := &corev1.Namespace{}
	if err := e.Hub.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		b.Fatal(err)
	}
	down := transform.Target{Key: "m2", Hub: string(kubeSystem.UID)}.Namespace(ns)
	m2 := e.Member("m2").Client
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(16)
	for name, snapshot := range replicas {
		g.Go(func() error {
			return m2.Create(ctx, claimOf(down, "floor-"+name, &corev1.TypedObjectReference{
				APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: snapshot}))
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	took := waitFor(b, "the floor's claims bound", func() (time.Duration, bool) {
		list := &corev1.PersistentVolumeClaimList{}
		if err := m2.List(ctx, list, client.InNamespace(down)); err != nil {
			b.Fatal(err)
		}
		bound := 0
		for _, pvc := range list.Items {
			if strings.HasPrefix(pvc.Name, "floor-") && pvc.Status.Phase == corev1.ClaimBound {
				bound++
			}
		}
		return time.Since(start), bound == len(replicas)
	})
	for name := range replicas {
		if err := m2.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: down, Name: "floor-" + name}}); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
	return took
}

// claimOf is an RWO claim of 1Gi of the default class, made from the snapshot from when given.
func claimOf(ns, name string, from *corev1.TypedObjectReference) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:     corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			DataSourceRef: from},
	}
	if from != nil {
		pvc.Spec.DataSource = &corev1.TypedLocalObjectReference{APIGroup: from.APIGroup, Kind: from.Kind, Name: from.Name}
	}
	return pvc
}

// ownerships lists the VolumeOwnerships of ns.
func ownerships(ctx context.Context, b *testing.B, c client.Client, ns string) []storagev1alpha1.VolumeOwnership {
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	return list.Items
}

// waitFor polls f every 100 ms for up to 10 minutes until it says done, and returns what it
// returned last.
func waitFor[T any](b *testing.B, what string, f func() (T, bool)) T {
	deadline := time.Now().Add(10 * time.Minute)
	for {
		v, done := f()
		if done {
			return v
		}
		if time.Now().After(deadline) {
			b.Fatalf("waited 10m for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
