package dr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
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
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

// benchThreshold is the benchmark pair's failover threshold, and benchInterval its
// replication interval.
const (
	benchThreshold = 5 * time.Second
	benchInterval  = time.Minute
)

// BenchmarkLocationFailover100Volumes binds 100 owned volumes in Location east, 50 of a
// namespace on each of its members m1 and m3, protects them with a LocationPair to west (m2)
// that replicates every minute, and writes a timestamped record to every volume every 100 ms
// until both members stop at once (syncer and API server), half an interval after a
// scheduled sync of every volume. It runs twice: with the primary lost alone
// (primary-lost), and on a hub across three sites, east in site-1 with the hub's leading API
// server and controller replica, west in site-2, with the whole of site-1 lost
// (hub-site-lost-too); the second also reports when the other replica took the lead
// (handover-s). Each reports, from the stop, when the pair's failover started (start-s: the
// targets' grace and the pair's threshold of 5 s) and when every volume was bound in west
// again (total-s: the RTO); the restore itself, from the failover's start (restore-s); the
// data each volume lost, from its write logs: the time from its newest record in the restored
// volume to the stop (the RPO; rpo-max-s and rpo-median-s, beside the bound of one interval
// and one sync, rpo-bound-s); the floor measured in the same run before the stop: the time
// m2's API server and storage take to bind 100 claims made in m2 directly from the same
// replicas, 16 at a time (floor-s), with the ratio restore-s / floor-s; on a hub of one site,
// the writes hub and m2 served from the stop until every volume was bound in west, per
// volume (writes/volume, and by kind in the log); and east's return (benchReturn).
func BenchmarkLocationFailover100Volumes(b *testing.B) {
	ctrl.SetLogger(logr.Discard())
	b.Run("primary-lost", func(b *testing.B) { benchFailover100(b, 1) })
	b.Run("hub-site-lost-too", func(b *testing.B) { benchFailover100(b, 3) })
}

// benchFailover100 is BenchmarkLocationFailover100Volumes on a hub of hubSites: with more
// than one, east's site is lost with the members.
func benchFailover100(b *testing.B, hubSites int) {
	const volumes = 100
	ctx := context.Background()
	for b.Loop() {
		e, err := environment.Start(ctx, environment.AcrossSites(environment.Options{VolSync: true, Locations: []environment.LocationOptions{
			{Name: "east", Domain: "east", Members: []string{"m1", "m3"}},
			{Name: "west", Domain: "west", Members: []string{"m2"}},
		}}, hubSites))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = e.Stop() })
		if err := e.WaitReady(ctx); err != nil {
			b.Fatal(err)
		}
		c := e.Hub.Client
		namespaces := []string{benchClaims(ctx, b, c, "bench-1", volumes/2), benchClaims(ctx, b, c, "bench-2", volumes/2)}
		owners := map[string]bool{}
		for _, ns := range namespaces {
			for _, vo := range ownerships(ctx, b, c, ns) {
				owners[vo.Status.Owner] = true
			}
		}
		if len(owners) != 2 {
			b.Fatalf("the volumes are on %v, not on both members of east", owners)
		}
		// One pair protects both namespaces: a Location is in one pair at most.
		pair := &schedulingv1alpha1.LocationPair{
			ObjectMeta: metav1.ObjectMeta{Name: "bench"},
			Spec: schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "1m",
				FailoverThreshold: &metav1.Duration{Duration: benchThreshold}},
		}
		if err := c.Create(ctx, pair); err != nil {
			b.Fatal(err)
		}
		paired := time.Now()
		handles := map[string]string{} // namespace/claim: volume handle, and the writers' volumes
		for _, ns := range namespaces {
			for _, vo := range ownerships(ctx, b, c, ns) {
				pv := &corev1.PersistentVolume{}
				if err := c.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv); err != nil {
					b.Fatal(err)
				}
				handles[vo.Namespace+"/"+vo.Name] = vo.Status.Owner + " " + pv.Spec.CSI.VolumeHandle
			}
		}
		stopWriting := write100ms(e.Storage("east"), handles)
		replicas := waitFor(b, "every volume replicated", func() (map[string]storagev1alpha1.VolumeOwnership, bool) {
			out := map[string]storagev1alpha1.VolumeOwnership{}
			for _, ns := range namespaces {
				for _, vo := range ownerships(ctx, b, c, ns) {
					if vo.Status.Replica != nil {
						out[vo.Namespace+"/"+vo.Name] = vo
					}
				}
			}
			return out, len(out) == volumes
		})
		protect := time.Since(paired)
		// The floor and the loss come after a scheduled sync of every volume, the loss half an
		// interval after it.
		latest := waitFor(b, "a scheduled sync of every volume", func() (map[string]storagev1alpha1.VolumeOwnership, bool) {
			out := map[string]storagev1alpha1.VolumeOwnership{}
			for _, ns := range namespaces {
				for _, vo := range ownerships(ctx, b, c, ns) {
					r := vo.Status.Replica
					if r == nil || r.Snapshot == replicas[vo.Namespace+"/"+vo.Name].Status.Replica.Snapshot {
						return nil, false
					}
					out[vo.Namespace+"/"+vo.Name] = vo
				}
			}
			return out, true
		})
		floor := restoreFloor(ctx, b, e, latest)
		var synced time.Time
		for _, vo := range latest {
			if t := vo.Status.Replica.Time.Time; synced.IsZero() || t.Before(synced) {
				synced = t
			}
		}
		time.Sleep(time.Until(synced.Add(benchInterval / 2)))

		// The bound on the data lost is one interval and the longest of the last syncs.
		var longestSync time.Duration
		for _, ns := range namespaces {
			list := &storagev1alpha1.VolumeReplicationList{}
			if err := c.List(ctx, list, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			for _, vr := range list.Items {
				if s := vr.Status.Source; s != nil && s.LastSyncDuration != nil {
					longestSync = max(longestSync, s.LastSyncDuration.Duration)
				}
			}
		}
		leader, _, err := e.ControllerLeader(ctx)
		if err != nil {
			b.Fatal(err)
		}
		writes := stopWriting()
		// Across sites, the hub's writes are each API server's: one's count would tell part.
		survivors := []*testbed.Cluster{e.Hub, e.Member("m2")}
		var before framework.WriteCounts
		if hubSites == 1 {
			before = framework.Writes(ctx, b, survivors)
		}
		stop := time.Now()
		if hubSites > 1 {
			err = e.StopSite(e.Hub.Sites()[0])
		} else {
			err = e.StopMembers("m1", "m3")
		}
		if err != nil {
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
			return time.Since(stop), pair.Status.LastAction.Progression == schedulingv1alpha1.ProgressionCompleted
		})
		if hubSites == 1 {
			restored := framework.Writes(ctx, b, survivors).Since(before)
			b.ReportMetric(float64(restored.Total())/volumes, "writes/volume")
			b.Logf("writes per volume from the stop until every volume was bound in west, by cluster, verb, resource and code:\n%s", restored.PerVolume(volumes))
		}
		var lost []time.Duration
		var worst string // the volume that lost most, with the replicas it was restored from and had before the stop
		var worstLoss time.Duration
		for _, ns := range namespaces {
			for _, vo := range ownerships(ctx, b, c, ns) {
				if vo.Status.Phase != storagev1alpha1.Bound || vo.Status.Owner != "m2" || vo.Status.RestoredFrom == nil {
					b.Fatalf("volume %s is %s on %s, restored from %v", vo.Name, vo.Status.Phase, vo.Status.Owner, vo.Status.RestoredFrom)
				}
				pv := &corev1.PersistentVolume{}
				if err := c.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv); err != nil {
					b.Fatal(err)
				}
				k := vo.Namespace + "/" + vo.Name
				l := dataLost(b, k, writes[k], e.Storage("west").Records(pv.Spec.CSI.VolumeHandle), stop)
				if l > worstLoss {
					worstLoss = l
					worst = fmt.Sprintf("%s lost %s: restored from %s/%s of %s; the latest replica before the stop was %s/%s of %s",
						k, l.Round(time.Millisecond), vo.Status.RestoredFrom.Target, vo.Status.RestoredFrom.Snapshot, vo.Status.RestoredFrom.Time.UTC().Format(time.RFC3339Nano),
						latest[k].Status.Replica.Target, latest[k].Status.Replica.Snapshot, latest[k].Status.Replica.Time.UTC().Format(time.RFC3339Nano))
				}
				lost = append(lost, l)
			}
		}
		if err := e.Storage("west").CheckWrites(); err != nil {
			b.Fatal(err)
		}
		slices.Sort(lost)
		rpoMax, rpoMedian, bound := lost[len(lost)-1], lost[len(lost)/2], benchInterval+longestSync
		restore := total - started
		b.ReportMetric(started.Seconds(), "start-s")
		b.ReportMetric(total.Seconds(), "total-s")
		b.ReportMetric(restore.Seconds(), "restore-s")
		b.ReportMetric(floor.Seconds(), "floor-s")
		b.ReportMetric(restore.Seconds()/floor.Seconds(), "restore/floor")
		b.ReportMetric(rpoMax.Seconds(), "rpo-max-s")
		b.ReportMetric(rpoMedian.Seconds(), "rpo-median-s")
		b.ReportMetric(bound.Seconds(), "rpo-bound-s")
		if hubSites > 1 {
			took := handover(ctx, b, e, leader, stop)
			b.ReportMetric(took.Seconds(), "handover-s")
			b.Logf("with east's hub site: the controller replica of site-2 took the lead %s after the stop", took.Round(time.Millisecond))
		}
		b.Logf("%d volumes on two members failed over from east to west: the failover started %s after the stop (grace and threshold %s), every volume was bound in west %s after it (RTO); the restore took %s, the floor %s (%.1fx); each volume lost at most %s of writes, %s in the median (bound: interval %s and one sync %s)",
			volumes, started.Round(time.Millisecond), benchThreshold, total.Round(time.Millisecond), restore.Round(time.Millisecond),
			floor.Round(time.Millisecond), restore.Seconds()/floor.Seconds(), rpoMax.Round(time.Millisecond), rpoMedian.Round(time.Millisecond),
			benchInterval, longestSync.Round(time.Millisecond))
		if rpoMax > bound {
			b.Errorf("a volume lost %s of writes, more than one interval and one sync (%s): %s (stopped at %s)", rpoMax, bound, worst, stop.UTC().Format(time.RFC3339Nano))
		}
		benchReturn(ctx, b, e, pair, protect, hubSites > 1)
		if err := e.Stop(); err != nil {
			b.Fatal(err)
		}
	}
}

// benchReturn starts east's members again and reports, from their start, when their Fences
// were lifted (lift-s) and when the pair protected every volume again (back-s); and, as the
// pair's history records them, the time from when the pair saw east return (a target of it
// Ready, clean and unfenced) to protected again (after-return-s), and the longest of the
// syncs that took (return-sync-s). Its floor is the pair's first protection of the same
// volumes, from the pair's creation to a replica of every one (protect-s): the same
// replications made and synced once, the other way.
func benchReturn(ctx context.Context, b *testing.B, e *environment.Environment, pair *schedulingv1alpha1.LocationPair, protect time.Duration, site bool) {
	c := e.Hub.Client
	back := time.Now()
	var err error
	if site {
		err = e.StartSite(ctx, e.Hub.Sites()[0])
	} else {
		err = errors.Join(e.StartMember(ctx, "m1"), e.StartMember(ctx, "m3"))
	}
	if err != nil {
		b.Fatal(err)
	}
	var lift time.Duration
	protected := waitFor(b, "the pair protecting again", func() (time.Duration, bool) {
		if lift == 0 {
			fences := &storagev1alpha1.FenceList{}
			if err := c.List(ctx, fences); err != nil {
				b.Fatal(err)
			}
			if !slices.ContainsFunc(fences.Items, func(f storagev1alpha1.Fence) bool {
				return (f.Spec.TargetName == "m1" || f.Spec.TargetName == "m3") && f.Status.Phase != storagev1alpha1.FenceUnfenced
			}) {
				lift = time.Since(back)
			}
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pair), pair); err != nil {
			b.Fatal(err)
		}
		return time.Since(back), pair.Status.Phase == schedulingv1alpha1.PairProtecting
	})
	h := pair.Status.History[len(pair.Status.History)-1]
	if h.ProtectedAfterReturn() == nil || h.ReturnSync == nil {
		b.Fatalf("the pair's history does not say when east returned, or the sync that protected it again: %+v", h)
	}
	b.ReportMetric(lift.Seconds(), "lift-s")
	b.ReportMetric(protected.Seconds(), "back-s")
	b.ReportMetric(h.ProtectedAfterReturn().Seconds(), "after-return-s")
	b.ReportMetric(h.ReturnSync.Seconds(), "return-sync-s")
	b.ReportMetric(protect.Seconds(), "protect-s")
	b.ReportMetric(h.ProtectedAfterReturn().Seconds()/protect.Seconds(), "after-return/protect")
	b.Logf("east's members started again: their Fences were lifted %s after, the pair protected every volume again %s after; "+
		"as its history records, %s after it saw east able to take replicas again, the longest sync %s; its first protection took %s",
		lift.Round(time.Millisecond), protected.Round(time.Millisecond), h.ProtectedAfterReturn().Round(time.Millisecond), h.ReturnSync.Round(time.Millisecond),
		protect.Round(time.Millisecond))
}

// handover is the time from stop to when a controller replica other than leader took the
// lead, as its leader Lease records.
func handover(ctx context.Context, b *testing.B, e *environment.Environment, leader string, stop time.Time) time.Duration {
	lease, err := e.ControllerLease(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); holder == "" || holder == leader || lease.Spec.AcquireTime == nil {
		b.Fatalf("the lead was not handed over: the Lease is held by %q since %v", holder, lease.Spec.AcquireTime)
	}
	return lease.Spec.AcquireTime.Sub(stop)
}

// write100ms writes a record "<unix nanoseconds>" to each volume every 100 ms, as the member
// that holds it ("<member> <handle>" by namespace/claim), until the function it returns is
// called; that one returns the records each volume acknowledged, by namespace/claim.
func write100ms(storage *simstorage.Storage, volumes map[string]string) func() map[string][]string {
	done, stopped := make(chan struct{}), make(chan struct{})
	acked := map[string][]string{}
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			for k, v := range volumes {
				member, handle, _ := strings.Cut(v, " ")
				record := strconv.FormatInt(time.Now().UnixNano(), 10)
				if storage.Write(member, handle, record) == nil {
					acked[k] = append(acked[k], record)
				}
			}
		}
	}()
	return func() map[string][]string {
		close(done)
		<-stopped
		return acked
	}
}

// dataLost is how much of the volume's acknowledged writes the restored volume lacks, as the
// time from its newest record to the stop; every record it has must be one acknowledged, in
// order.
func dataLost(b *testing.B, k string, acked, restored []string, stop time.Time) time.Duration {
	if len(restored) == 0 || len(restored) > len(acked) || !slices.Equal(restored, acked[:len(restored)]) {
		b.Fatalf("volume %s restored %d records that are not the first of the %d acknowledged", k, len(restored), len(acked))
	}
	newest, err := strconv.ParseInt(restored[len(restored)-1], 10, 64)
	if err != nil {
		b.Fatal(err)
	}
	return stop.Sub(time.Unix(0, newest))
}

// benchClaims makes a namespace placed in east with n claims, and waits until each is bound
// on a member of east.
func benchClaims(ctx context.Context, b *testing.B, c client.Client, ns string, n int) string {
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{framework.AppLabel: ns}}},
		framework.Placement(ns, "east"),
	}
	for i := range n {
		objs = append(objs, claimOf(ns, fmt.Sprintf("data-%03d", i), nil))
	}
	for _, o := range objs {
		if err := c.Create(ctx, o); err != nil {
			b.Fatal(err)
		}
	}
	waitFor(b, "every volume bound in east", func() (struct{}, bool) {
		bound := 0
		for _, vo := range ownerships(ctx, b, c, ns) {
			if vo.Status.Phase == storagev1alpha1.Bound && (vo.Status.Owner == "m1" || vo.Status.Owner == "m3") {
				bound++
			}
		}
		return struct{}{}, bound == n
	})
	return ns
}

// restoreFloor makes, in m2's copies of the namespaces, a claim from each volume's replica,
// 16 at a time, and returns how long it took until every one was bound; the claims go after.
// m2's syncer is stopped meanwhile: it would take the claims up as the hub's.
func restoreFloor(ctx context.Context, b *testing.B, e *environment.Environment, replicas map[string]storagev1alpha1.VolumeOwnership) time.Duration {
	if err := e.StopMember("m2", true); err != nil {
		b.Fatal(err)
	}
	kubeSystem := &corev1.Namespace{}
	if err := e.Hub.Client.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem); err != nil {
		b.Fatal(err)
	}
	down := func(ns string) string { return transform.Target{Key: "m2", Hub: string(kubeSystem.UID)}.Namespace(ns) }
	m2 := e.Member("m2").Client
	start := time.Now()
	var g errgroup.Group
	g.SetLimit(16)
	for _, vo := range replicas {
		g.Go(func() error {
			return m2.Create(ctx, claimOf(down(vo.Namespace), "floor-"+vo.Name, &corev1.TypedObjectReference{
				APIGroup: ptr.To("snapshot.storage.k8s.io"), Kind: "VolumeSnapshot", Name: vo.Status.Replica.Snapshot}))
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	took := waitFor(b, "the floor's claims bound", func() (time.Duration, bool) {
		list := &corev1.PersistentVolumeClaimList{}
		if err := m2.List(ctx, list); err != nil {
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
	for _, vo := range replicas {
		if err := m2.Delete(ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: down(vo.Namespace), Name: "floor-" + vo.Name}}); client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
	}
	waitFor(b, "the floor's claims gone", func() (struct{}, bool) {
		list := &corev1.PersistentVolumeClaimList{}
		if err := m2.List(ctx, list); err != nil {
			b.Fatal(err)
		}
		return struct{}{}, !slices.ContainsFunc(list.Items, func(pvc corev1.PersistentVolumeClaim) bool { return strings.HasPrefix(pvc.Name, "floor-") })
	})
	if err := e.StartMember(ctx, "m2"); err != nil {
		b.Fatal(err)
	}
	if err := e.WaitReady(ctx); err != nil {
		b.Fatal(err)
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
