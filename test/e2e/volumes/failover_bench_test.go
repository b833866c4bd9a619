package volumes

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	coordinationctrl "github.com/custody-dev/custody/controllers/coordination"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

// The failover benchmark's bed and the goals it is measured against.
const (
	failoverHeartbeat = 2 * time.Second
	// goalDetect is three heartbeats: the default grace.
	goalDetect = 3 * failoverHeartbeat
	goalTotal  = 30 * time.Second
	// fieldOwner is the field manager of the floor's server-side applies.
	fieldOwner = "custody-floor"
)

// BenchmarkFailover1000OwnedVolumes binds 1,000 owned volumes of one namespace on one member
// of a Location of two, stops that member's syncer and API server, and reports, from that
// moment, how long the hub takes to see the member Unreachable (detect-s), until the Fence
// of it holds (fence-s) and until every VolumeOwnership is in phase Bound on the survivor
// (total-s; bound-s counts from the detection, moves-s from the fence); the API writes per
// volume on the hub and the survivor until every volume is also in use there (its last
// status write), heartbeats and events left out; and the write floor (floor-s, see
// writeFloor) with the ratios bound-s / floor-s and moves-s / floor-s. The second is the
// cost of the moves themselves: bound-s holds the fence delay, which no volume may skip.
//
// The heartbeat period is 2 s; the grace (three periods) and the fence delay (three graces,
// 18 s) are the defaults, so no volume may move before 24 s after the last heartbeat. The
// goals, all Bound within 30 s of the stop and detection within three heartbeats, are
// logged beside the figures; missing them does not fail the benchmark.
func BenchmarkFailover1000OwnedVolumes(b *testing.B) {
	const volumes = 1000
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		o := environment.OneLocation()
		o.HeartbeatPeriod = failoverHeartbeat
		r := startRun(ctx, b, o)
		ns := seedVolumes(ctx, b, r.Hub.Client, volumes)
		lost := waitOwners(ctx, b, r.cache, ns, volumes, "", inUse)
		floor := writeFloor(ctx, b, r, ns, environment.Other(lost), volumes, false)
		f := measureFailover(ctx, b, r, ns, lost, volumes)
		r.stop(b)
		checkLedger(b, r.Storage(domain))
		f.report(b, volumes, floor)
	}
}

// failover is what one failover took, each time from the stop of the lost member.
type failover struct {
	detected, requested, fenced, bound, inUse time.Duration
	// writes is what the hub's and the survivor's API servers wrote until every volume was in
	// use on the survivor.
	writes framework.WriteCounts
}

// measureFailover stops the lost member and waits for each step of its failover.
func measureFailover(ctx context.Context, b *testing.B, r *run, ns, lost string, n int) failover {
	settle(ctx, b, r.clusters())
	survivor := environment.Other(lost)
	clusters := []*testbed.Cluster{r.Hub, r.Member(survivor)}
	before := framework.Writes(ctx, b, clusters)
	start := time.Now()
	if err := r.StopMember(lost, false); err != nil {
		b.Fatal(err)
	}
	fence := client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}
	f := failover{}
	f.detected = poll(b, lost+" Unreachable", time.Minute, cachePoll, func() bool { return unreachable(ctx, b, r.cache, lost) }).Sub(start)
	f.requested = poll(b, "Fence "+fence.Name+" requested", 2*time.Minute, cachePoll, func() bool { return fencePhase(ctx, b, r.cache, fence) != nil }).Sub(start)
	f.fenced = poll(b, "Fence "+fence.Name+" Fenced", 2*time.Minute, cachePoll, func() bool {
		p := fencePhase(ctx, b, r.cache, fence)
		return p != nil && *p == storagev1alpha1.FenceFenced
	}).Sub(start)
	waitOwners(ctx, b, r.cache, ns, n, survivor, boundPhase)
	f.bound = time.Since(start)
	waitOwners(ctx, b, r.cache, ns, n, survivor, inUse)
	f.inUse = time.Since(start)
	f.writes = framework.Writes(ctx, b, clusters).Since(before)
	return f
}

// unreachable tells whether the hub marked the target Unreachable.
func unreachable(ctx context.Context, b *testing.B, r client.Reader, target string) bool {
	t := &workloadv1alpha1.SyncTarget{}
	if err := r.Get(ctx, client.ObjectKey{Name: target}, t); err != nil {
		b.Fatal(err)
	}
	return !t.UnreachableSince().IsZero()
}

// fencePhase is the phase of the Fence; nil while there is none.
func fencePhase(ctx context.Context, b *testing.B, r client.Reader, key client.ObjectKey) *storagev1alpha1.FencePhase {
	f := &storagev1alpha1.Fence{}
	if err := r.Get(ctx, key, f); err != nil {
		if client.IgnoreNotFound(err) != nil {
			b.Fatal(err)
		}
		return nil
	}
	return &f.Status.Phase
}

// report reports the figures, and logs the goals and where the time went.
func (f failover) report(b *testing.B, n int, floor time.Duration) {
	bound := f.bound - f.detected
	b.ReportMetric(f.detected.Seconds(), "detect-s")
	b.ReportMetric(f.fenced.Seconds(), "fence-s")
	b.ReportMetric(bound.Seconds(), "bound-s")
	b.ReportMetric(f.bound.Seconds(), "total-s")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(bound.Seconds()/floor.Seconds(), "bound/floor")
	moves := f.bound - f.fenced
	b.ReportMetric(moves.Seconds(), "moves-s")
	b.ReportMetric(moves.Seconds()/floor.Seconds(), "moves/floor")
	b.ReportMetric(float64(f.writes.Total())/float64(n), "writes/volume")
	b.Logf("goals: detect-s %.1f (goal ≤ %.0f), total-s %.1f (goal < %.0f)",
		f.detected.Seconds(), goalDetect.Seconds(), f.bound.Seconds(), goalTotal.Seconds())
	b.Logf("from the stop: Unreachable %.1fs, Fence requested %.1fs, Fenced %.1fs, all Bound %.1fs, all in use %.1fs",
		f.detected.Seconds(), f.requested.Seconds(), f.fenced.Seconds(), f.bound.Seconds(), f.inUse.Seconds())
	b.Logf("writes per volume, by cluster, verb, resource and code:\n%s", f.writes.PerVolume(n))
}

// checkLedger fails the benchmark if the storage saw an owned volume with two owners, or
// storage released wrongly.
func checkLedger(b *testing.B, s *simstorage.Storage) {
	if err := s.CheckSingleOwner(); err != nil {
		b.Fatal(err)
	}
	if err := s.CheckReleases(); err != nil {
		b.Fatal(err)
	}
}

// floorNamespace holds the floor's scratch objects, on the hub and in the members.
const floorNamespace = "floor"

// writeFloor times the writes that moving the namespace's n volumes to member to cannot do
// without, done directly by as many workers as coordination has, each volume's in order:
//
//   - a merge patch of the hub claim and one of the hub PV, each taking the state label of
//     the old owner off and giving the new owner its own, as coordination patches them;
//   - a server-side apply of the VolumeOwnership's status, with the status coordination
//     last recorded for the volume;
//   - a server-side apply of the copy of the claim and of the PV in the new owner, as its
//     syncer makes them;
//   - when the old owner answers (acknowledged), the deletion of its copies of the claim and
//     the PV, as its syncer lets go of them; a lost owner deletes nothing.
//
// They go to scratch objects in namespace floorNamespace, which no controller or syncer acts
// on: labels of their own instead of Custody's, and a PV of a CSI driver other than the
// simulated storage's. The floor runs on the quiet bed before what it is compared with, and
// returns once the new owner's binder bound the copies: each starts on a quiet bed (see
// settle). Left out, as writes a move could in principle spare: the Fence of a lost owner,
// the syncers' finalizers on the hub claim and PV, the claim's status reported back, every
// step a volume waits in on the way, and the members' binders and attachers.
func writeFloor(ctx context.Context, b *testing.B, r *run, ns, to string, n int, acknowledged bool) time.Duration {
	hub, member := r.Hub.Client, r.Member(to).Client
	var left client.Client
	if acknowledged {
		left = r.Member(environment.Other(to)).Client
	}
	statuses := ownershipStatuses(ctx, b, r.cache, ns)
	vols := make([]*floorVolume, n)
	for i := range vols {
		vols[i] = newFloorVolume(fmt.Sprintf("data-%03d", i), environment.Other(to))
	}
	prepareFloor(ctx, b, hub, member, left, vols)
	settle(ctx, b, r.clusters())
	start := time.Now()
	g := &errgroup.Group{}
	g.SetLimit(coordinationctrl.Concurrency)
	for _, v := range vols {
		g.Go(func() error { return v.move(ctx, hub, member, left, to, statuses[v.claim.Name]) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	elapsed := time.Since(start)
	poll(b, "the floor's copies Bound in "+to, 10*time.Minute, apiPoll, func() bool { return allBound(ctx, b, member, n) })
	return elapsed
}

// allBound tells whether the n claims of the floor's namespace in the member are Bound.
func allBound(ctx context.Context, b *testing.B, c client.Client, n int) bool {
	list := &corev1.PersistentVolumeClaimList{}
	if err := c.List(ctx, list, client.InNamespace(floorNamespace)); err != nil {
		b.Fatal(err)
	}
	bound := 0
	for _, pvc := range list.Items {
		if pvc.Status.Phase == corev1.ClaimBound {
			bound++
		}
	}
	return bound == n
}

// ownershipStatuses are the statuses of the namespace's VolumeOwnerships, by name.
func ownershipStatuses(ctx context.Context, b *testing.B, r client.Reader, ns string) map[string]storagev1alpha1.VolumeOwnershipStatus {
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := r.List(ctx, list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	out := make(map[string]storagev1alpha1.VolumeOwnershipStatus, len(list.Items))
	for _, vo := range list.Items {
		out[vo.Name] = vo.Status
	}
	return out
}

// floorVolume is one volume's scratch objects on the hub.
type floorVolume struct {
	claim     *corev1.PersistentVolumeClaim
	pv        *corev1.PersistentVolume
	ownership *storagev1alpha1.VolumeOwnership
}

// newFloorVolume makes the scratch objects of a volume held by owner.
func newFloorVolume(name, owner string) *floorVolume {
	v := &floorVolume{
		claim: claimObject(floorNamespace, name, corev1.ReadWriteOnce),
		pv: &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: floorNamespace + "-" + name},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              domain,
				ClaimRef:                      &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: floorNamespace, Name: name},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "floor.custody.dev", VolumeHandle: floorNamespace + "-" + name,
				}},
			},
		},
		ownership: &storagev1alpha1.VolumeOwnership{ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: name}},
	}
	v.claim.Spec.VolumeName = v.pv.Name
	hand(v.claim, "", owner)
	hand(v.pv, "", owner)
	return v
}

// hand moves the object's floor state label from one owner to another; "" is none.
func hand(o metav1.Object, from, to string) {
	labels := o.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	delete(labels, "floor.custody.dev/state-"+from)
	if to != "" {
		labels["floor.custody.dev/state-"+to] = string(workloadv1alpha1.ResourceStateSync)
	}
	o.SetLabels(labels)
}

// prepareFloor creates the scratch namespace on the hub, in member and in left unless it is
// nil, the volumes' objects on the hub, and their copies in left.
func prepareFloor(ctx context.Context, b *testing.B, hub, member, left client.Client, vols []*floorVolume) {
	clusters := []client.Client{hub, member}
	if left != nil {
		clusters = append(clusters, left)
	}
	for _, c := range clusters {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: floorNamespace}}); err != nil {
			b.Fatal(err)
		}
	}
	g := &errgroup.Group{}
	g.SetLimit(coordinationctrl.Concurrency)
	for _, v := range vols {
		g.Go(func() error {
			for _, o := range []client.Object{v.pv, v.claim, v.ownership} {
				if err := hub.Create(ctx, o); err != nil {
					return err
				}
			}
			if left == nil {
				return nil
			}
			return v.applyCopies(ctx, left)
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
}

// move makes the minimal writes of the volume's move to member to, with the deletion of
// its copies in left unless left is nil; st is the status to record.
func (v *floorVolume) move(ctx context.Context, hub, member, left client.Client, to string, st storagev1alpha1.VolumeOwnershipStatus) error {
	if err := v.handOver(ctx, hub, to); err != nil {
		return err
	}
	if err := v.record(ctx, hub, st); err != nil {
		return err
	}
	if err := v.applyCopies(ctx, member); err != nil {
		return err
	}
	if left == nil {
		return nil
	}
	for _, o := range []client.Object{copyOf(v.claim), copyOf(v.pv)} {
		if err := left.Delete(ctx, o); err != nil {
			return err
		}
	}
	return nil
}

// applyCopies applies the member's copies of the volume's claim and PV.
func (v *floorVolume) applyCopies(ctx context.Context, member client.Client) error {
	for _, o := range []client.Object{copyOf(v.claim), copyOf(v.pv)} {
		cfg, err := applyConfiguration(member, o)
		if err != nil {
			return err
		}
		if err := member.Apply(ctx, cfg, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return err
		}
	}
	return nil
}

// handOver patches the hub claim and PV from the lost owner to survivor.
func (v *floorVolume) handOver(ctx context.Context, hub client.Client, survivor string) error {
	for _, o := range []client.Object{v.claim, v.pv} {
		patch := client.MergeFromWithOptions(o.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
		hand(o, environment.Other(survivor), survivor)
		if err := hub.Patch(ctx, o, patch); err != nil {
			return err
		}
	}
	return nil
}

// record applies st as the status of the volume's VolumeOwnership.
func (v *floorVolume) record(ctx context.Context, hub client.Client, st storagev1alpha1.VolumeOwnershipStatus) error {
	status, err := applyConfiguration(hub, &storagev1alpha1.VolumeOwnership{
		ObjectMeta: metav1.ObjectMeta{Namespace: floorNamespace, Name: v.ownership.Name}, Status: st,
	})
	if err != nil {
		return err
	}
	return hub.Status().Apply(ctx, status, client.FieldOwner(fieldOwner), client.ForceOwnership)
}

// copyOf is the object as a member gets it: without the hub's metadata.
func copyOf(o client.Object) client.Object {
	c := o.DeepCopyObject().(client.Object)
	c.SetResourceVersion("")
	c.SetUID("")
	c.SetCreationTimestamp(metav1.Time{})
	c.SetManagedFields(nil)
	return c
}

// applyConfiguration is obj, of a kind c knows, as a server-side apply configuration.
func applyConfiguration(c client.Client, obj client.Object) (runtime.ApplyConfiguration, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: content}
	u.SetGroupVersionKind(gvk)
	return client.ApplyConfigurationFromUnstructured(u), nil
}
