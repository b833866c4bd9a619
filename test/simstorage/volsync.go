package simstorage

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/custody-dev/custody/controllers/reconnect"
)

// VolSync plays VolSync's rsync-TLS movers and a CSI snapshotter in the members it is
// attached to, across storage domains. A ReplicationDestination publishes an address and
// gets a destination claim, which the member's storage provisions. A ReplicationSource syncs
// on VolSync's triggers (at once when new, then on its schedule, or when its manual trigger
// changes) to the destination at its address, if both hold the same pre-shared key: the
// source volume's log is copied into the destination volume, which is snapshotted, and both
// report the sync as VolSync does. A VolumeSnapshot becomes ready as the snapshot
// controller and a CSI snapshotter make it (see snapshotReady), and a claim whose dataSource
// is a ready VolumeSnapshot is provisioned with its content.
type VolSync struct {
	mu      sync.Mutex
	members map[string]*volsyncMember
	syncs   degradation
	wg      sync.WaitGroup
}

type volsyncMember struct {
	name     string
	client   client.Client
	reader   client.Reader
	storages []*Storage // the domains the member reaches
}

// storage is the member's domain whose driver is named driver, or nil.
func (m *volsyncMember) storage(driver string) *Storage {
	for _, s := range m.storages {
		if s.Provisioner() == driver {
			return s
		}
	}
	return nil
}

// NewVolSync returns a player attached to no member yet.
func NewVolSync() *VolSync {
	return &VolSync{members: map[string]*volsyncMember{}}
}

// FailSyncs makes every sync from now on fail with msg; "" lets them succeed again.
func (v *VolSync) FailSyncs(msg string) { v.syncs.fail(msg) }

// SlowSyncs makes every sync take d from its start, those under way too: a long d stalls
// them, and 0 ends the stall.
func (v *VolSync) SlowSyncs(d time.Duration) { v.syncs.slow(d) }

// Attach plays VolSync and the snapshotter in member, which reaches the storage domains
// storages, until ctx ends.
func (v *VolSync) Attach(ctx context.Context, member string, cfg *rest.Config, storages []*Storage) error {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, volsyncv1alpha1.AddToScheme, snapshotv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	// As the storage's driver, VolSync's controller sees a member again at once when its API
	// server answers again, with no backoff left from the outage.
	recovery := reconnect.New()
	mgr, err := ctrl.NewManager(reconnect.Config(cfg), ctrl.Options{
		Scheme:                 scheme,
		Cache:                  cache.Options{NewInformer: recovery.NewInformer},
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 ctrl.Log.WithName("simvolsync").WithValues("member", member),
	})
	if err != nil {
		return err
	}
	m := &volsyncMember{name: member, client: mgr.GetClient(), reader: mgr.GetAPIReader(), storages: storages}
	v.mu.Lock()
	v.members[member] = m
	v.mu.Unlock()
	opts := controller.Options{NewQueue: recovery.NewQueue}
	for name, c := range map[string]struct {
		obj client.Object
		do  reconcile.Func
	}{
		"destinations": {&volsyncv1alpha1.ReplicationDestination{}, func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, v.listen(ctx, m, req.NamespacedName)
		}},
		"sources": {&volsyncv1alpha1.ReplicationSource{}, func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return v.source(ctx, m, req.NamespacedName)
		}},
		"snapshots": {&snapshotv1.VolumeSnapshot{}, func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return m.snapshotReady(ctx, req.NamespacedName)
		}},
		"contents": {&snapshotv1.VolumeSnapshotContent{}, func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			return reconcile.Result{}, m.contentProtected(ctx, req.Name)
		}},
	} {
		if err := ctrl.NewControllerManagedBy(mgr).Named("simvolsync-" + member + "-" + name).For(c.obj).WithOptions(opts).Complete(c.do); err != nil {
			return err
		}
	}
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		if err := mgr.Start(ctx); err != nil {
			ctrl.Log.Error(err, "Simulated VolSync stopped", "member", member)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("simulated VolSync: cache of %s did not sync", member)
	}
	return nil
}

// Wait blocks until every member's player stopped.
func (v *VolSync) Wait() { v.wg.Wait() }

// rsyncPort is the port VolSync's rsync-TLS destinations listen on.
const rsyncPort = 8000

// address is where a destination listens: it names the member, so that the player finds it.
func address(member string, rd client.ObjectKey) string {
	return fmt.Sprintf("volsync-rsync-tls-dst-%s.%s.%s.sim", rd.Name, rd.Namespace, member)
}

// destinationClaim is the name VolSync gives a destination's claim.
func destinationClaim(rd string) string { return "volsync-" + rd + "-dst" }

// listen makes a new ReplicationDestination's claim and publishes its address, as VolSync's
// rsync-TLS mover does once its Service exists.
func (v *VolSync) listen(ctx context.Context, m *volsyncMember, key client.ObjectKey) error {
	rd := &volsyncv1alpha1.ReplicationDestination{}
	if err := m.client.Get(ctx, key, rd); err != nil || rd.Spec.RsyncTLS == nil || rd.DeletionTimestamp != nil {
		return client.IgnoreNotFound(err)
	}
	opts := rd.Spec.RsyncTLS.ReplicationDestinationVolumeOptions
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: destinationClaim(key.Name)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: opts.AccessModes, StorageClassName: opts.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: ptr.Deref(opts.Capacity, resource.MustParse("1Gi"))}},
		},
	}
	if err := controllerutil.SetControllerReference(rd, claim, m.client.Scheme()); err != nil {
		return err
	}
	if err := m.client.Create(ctx, claim); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	if rd.Status != nil && rd.Status.RsyncTLS != nil && rd.Status.RsyncTLS.Address != nil {
		return nil
	}
	patch := client.MergeFrom(rd.DeepCopy())
	if rd.Status == nil {
		rd.Status = &volsyncv1alpha1.ReplicationDestinationStatus{}
	}
	now := metav1.Now()
	rd.Status.RsyncTLS = &volsyncv1alpha1.ReplicationDestinationRsyncTLSStatus{
		Address: ptr.To(address(m.name, key)), Port: ptr.To(int32(rsyncPort)), KeySecret: rd.Spec.RsyncTLS.KeySecret,
	}
	rd.Status.LastSyncStartTime = &now
	meta.SetStatusCondition(&rd.Status.Conditions, metav1.Condition{Type: volsyncv1alpha1.ConditionSynchronizing,
		Status: metav1.ConditionTrue, Reason: volsyncv1alpha1.SynchronizingReasonSync, Message: "Synchronization in-progress"})
	return m.client.Status().Patch(ctx, rd, patch)
}

// source runs a ReplicationSource's sync when its trigger says, and waits for the next.
func (v *VolSync) source(ctx context.Context, m *volsyncMember, key client.ObjectKey) (reconcile.Result, error) {
	rs := &volsyncv1alpha1.ReplicationSource{}
	if err := m.client.Get(ctx, key, rs); err != nil || rs.Spec.RsyncTLS == nil || rs.DeletionTimestamp != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	due, wait, err := dueNow(rs, time.Now())
	if err != nil || !due {
		return reconcile.Result{RequeueAfter: wait}, err
	}
	if rs.Status == nil {
		rs.Status = &volsyncv1alpha1.ReplicationSourceStatus{}
	}
	// The mover starts: VolSync reports the sync under way. The source was read from the
	// cache, which may not hold yet the last sync's status: a stale read conflicts here
	// rather than sync again.
	start := time.Now()
	patch := client.MergeFromWithOptions(rs.DeepCopy(), client.MergeFromWithOptimisticLock{})
	rs.Status.LastSyncStartTime = &metav1.Time{Time: start}
	meta.SetStatusCondition(&rs.Status.Conditions, metav1.Condition{Type: volsyncv1alpha1.ConditionSynchronizing,
		Status: metav1.ConditionTrue, Reason: volsyncv1alpha1.SynchronizingReasonSync, Message: "Synchronization in-progress"})
	if err := m.client.Status().Patch(ctx, rs, patch); err != nil {
		return reconcile.Result{}, err
	}
	syncErr := v.syncs.answer(ctx)
	if syncErr == nil {
		syncErr = v.sync(ctx, m, rs, start)
	}
	patch = client.MergeFrom(rs.DeepCopy())
	now := metav1.Now()
	if syncErr != nil {
		ctrl.LoggerFrom(ctx).Info("Sync failed", "reason", syncErr.Error())
		rs.Status.LatestMoverStatus = &volsyncv1alpha1.MoverStatus{Result: volsyncv1alpha1.MoverResultFailed, Logs: syncErr.Error()}
		meta.SetStatusCondition(&rs.Status.Conditions, metav1.Condition{Type: volsyncv1alpha1.ConditionSynchronizing,
			Status: metav1.ConditionFalse, Reason: volsyncv1alpha1.SynchronizingReasonError, Message: syncErr.Error()})
		// VolSync retries a failed mover with a backoff.
		return reconcile.Result{RequeueAfter: 5 * time.Second}, m.client.Status().Patch(ctx, rs, patch)
	}
	rs.Status.LastSyncTime, rs.Status.LastSyncStartTime = &now, nil
	rs.Status.LastSyncDuration = &metav1.Duration{Duration: now.Sub(start)}
	trigger := ptr.Deref(rs.Spec.Trigger, volsyncv1alpha1.ReplicationSourceTriggerSpec{})
	ctrl.LoggerFrom(ctx).Info("Synced", "manual", trigger.Manual)
	rs.Status.LastManualSync = trigger.Manual
	rs.Status.LatestMoverStatus = &volsyncv1alpha1.MoverStatus{Result: volsyncv1alpha1.MoverResultSuccessful}
	reason := volsyncv1alpha1.SynchronizingReasonManual
	rs.Status.NextSyncTime = nil
	if s := ptr.Deref(trigger.Schedule, ""); trigger.Manual == "" && s != "" {
		next, err := nextRun(s, now.Time)
		if err != nil {
			return reconcile.Result{}, err
		}
		rs.Status.NextSyncTime, reason = &metav1.Time{Time: next}, volsyncv1alpha1.SynchronizingReasonSched
		wait = time.Until(next)
	}
	meta.SetStatusCondition(&rs.Status.Conditions, metav1.Condition{Type: volsyncv1alpha1.ConditionSynchronizing,
		Status: metav1.ConditionFalse, Reason: reason, Message: "Synchronization completed"})
	return reconcile.Result{RequeueAfter: wait}, m.client.Status().Patch(ctx, rs, patch)
}

// dueNow tells, as VolSync's state machine, whether the source syncs now: at once when it
// never synced, when its manual trigger differs from the last one answered, or once its
// schedule's next time passed; else how long until it does.
func dueNow(rs *volsyncv1alpha1.ReplicationSource, now time.Time) (bool, time.Duration, error) {
	t, st := rs.Spec.Trigger, ptr.Deref(rs.Status, volsyncv1alpha1.ReplicationSourceStatus{})
	switch {
	case st.LastSyncTime == nil:
		return true, 0, nil
	case t != nil && t.Manual != "":
		return t.Manual != st.LastManualSync, 0, nil
	case t != nil && t.Schedule != nil:
		next, err := nextRun(*t.Schedule, st.LastSyncTime.Time)
		if err != nil {
			return false, 0, err
		}
		return !now.Before(next), next.Sub(now), nil
	}
	return true, 0, nil
}

// sync copies the source volume's log into the destination's volume and snapshots it.
func (v *VolSync) sync(ctx context.Context, m *volsyncMember, rs *volsyncv1alpha1.ReplicationSource, start time.Time) error {
	tls := rs.Spec.RsyncTLS
	dst, rdKey, err := v.resolve(ptr.Deref(tls.Address, ""))
	if err != nil {
		return err
	}
	rd := &volsyncv1alpha1.ReplicationDestination{}
	if err := dst.client.Get(ctx, rdKey, rd); err != nil {
		return fmt.Errorf("connecting to %s: %w", ptr.Deref(tls.Address, ""), err)
	}
	if err := samePSK(ctx, m, client.ObjectKey{Namespace: rs.Namespace, Name: ptr.Deref(tls.KeySecret, "")},
		dst, client.ObjectKey{Namespace: rdKey.Namespace, Name: ptr.Deref(rd.Spec.RsyncTLS.KeySecret, "")}); err != nil {
		return err
	}
	fromStorage, from, err := m.volumeOf(ctx, client.ObjectKey{Namespace: rs.Namespace, Name: rs.Spec.SourcePVC})
	if err != nil {
		return err
	}
	toStorage, to, err := dst.volumeOf(ctx, client.ObjectKey{Namespace: rdKey.Namespace, Name: destinationClaim(rdKey.Name)})
	if err != nil {
		return err
	}
	if fromStorage.Fenced(m.name) {
		// The mover reads the volume from the member's nodes, which the fence cut off.
		return fmt.Errorf("reading volume %s: I/O error: %s is fenced off storage %s", from, m.name, fromStorage.Name())
	}
	log := fromStorage.Records(from)
	if err := toStorage.load(to, log); err != nil {
		return err
	}
	snap := &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: rdKey.Namespace, Name: fmt.Sprintf("volsync-%s-dst-%d", rdKey.Name, start.UnixNano())},
		Spec:       snapshotv1.VolumeSnapshotSpec{Source: snapshotv1.VolumeSnapshotSource{PersistentVolumeClaimName: ptr.To(destinationClaim(rdKey.Name))}},
	}
	if err := controllerutil.SetControllerReference(rd, snap, dst.client.Scheme()); err != nil {
		return err
	}
	toStorage.ledger.cut(snapshotKey(dst.name, snap.Namespace, snap.Name), toStorage.name+"-snap-"+string(uuid.NewUUID()), to, log)
	if err := dst.client.Create(ctx, snap); err != nil {
		return err
	}
	patch := client.MergeFrom(rd.DeepCopy())
	if rd.Status == nil {
		rd.Status = &volsyncv1alpha1.ReplicationDestinationStatus{}
	}
	now := metav1.Now()
	began := start
	if rd.Status.LastSyncStartTime != nil {
		began = rd.Status.LastSyncStartTime.Time
	}
	rd.Status.LastSyncTime, rd.Status.LastSyncDuration = &now, &metav1.Duration{Duration: now.Sub(began)}
	rd.Status.LastSyncStartTime = &now // listening again at once, as with no trigger
	rd.Status.LatestImage = &corev1.TypedLocalObjectReference{APIGroup: ptr.To(snapshotv1.GroupName), Kind: "VolumeSnapshot", Name: snap.Name}
	rd.Status.LatestMoverStatus = &volsyncv1alpha1.MoverStatus{Result: volsyncv1alpha1.MoverResultSuccessful}
	return dst.client.Status().Patch(ctx, rd, patch)
}

// doNotDelete is the label that keeps VolSync from deleting a snapshot it took.
const doNotDelete = "volsync.backube/do-not-delete"

// rotate deletes the images a ReplicationDestination took before the one now ready, as
// VolSync does once a new image is bound, unless they are labelled doNotDelete: VolSync then
// gives them up (drops its owner reference), and they are whoever labelled them's.
func rotate(ctx context.Context, c client.Client, ready *snapshotv1.VolumeSnapshot) error {
	rd := metav1.GetControllerOf(ready)
	if rd == nil || rd.Kind != "ReplicationDestination" {
		return nil
	}
	list := &snapshotv1.VolumeSnapshotList{}
	if err := c.List(ctx, list, client.InNamespace(ready.Namespace)); err != nil {
		return err
	}
	for i := range list.Items {
		old := &list.Items[i]
		if owner := metav1.GetControllerOf(old); owner == nil || owner.UID != rd.UID || takenAt(old) >= takenAt(ready) {
			continue
		}
		if _, kept := old.Labels[doNotDelete]; kept {
			// Optimistically, as VolSync updates it: a label taken off meanwhile is seen on the
			// retry, and the image deleted, not left with neither label nor owner.
			patch := client.MergeFromWithOptions(old.DeepCopy(), client.MergeFromWithOptimisticLock{})
			old.OwnerReferences = slices.DeleteFunc(old.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == rd.UID })
			if err := c.Patch(ctx, old, patch); client.IgnoreNotFound(err) != nil {
				return err
			}
			continue
		}
		if err := c.Delete(ctx, old); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// takenAt orders the images the player took: the nanoseconds their names end in (sync), which
// the creation timestamps' seconds do not tell apart; 0 for another snapshot.
func takenAt(s *snapshotv1.VolumeSnapshot) int64 {
	n, _ := strconv.ParseInt(s.Name[strings.LastIndex(s.Name, "-")+1:], 10, 64)
	return n
}

// resolve finds the member and the ReplicationDestination an address names.
func (v *VolSync) resolve(addr string) (*volsyncMember, client.ObjectKey, error) {
	host, ok := strings.CutSuffix(strings.TrimPrefix(addr, "volsync-rsync-tls-dst-"), ".sim")
	parts := strings.Split(host, ".")
	if !ok || len(parts) != 3 {
		return nil, client.ObjectKey{}, fmt.Errorf("no route to %q", addr)
	}
	v.mu.Lock()
	m := v.members[parts[2]]
	v.mu.Unlock()
	if m == nil {
		return nil, client.ObjectKey{}, fmt.Errorf("no route to %q", addr)
	}
	return m, client.ObjectKey{Namespace: parts[1], Name: parts[0]}, nil
}

// samePSK fails as the TLS handshake does when the two sides' pre-shared keys differ.
func samePSK(ctx context.Context, src *volsyncMember, srcKey client.ObjectKey, dst *volsyncMember, dstKey client.ObjectKey) error {
	var keys [2][]byte
	for i, side := range []struct {
		m   *volsyncMember
		key client.ObjectKey
	}{{src, srcKey}, {dst, dstKey}} {
		s := &corev1.Secret{}
		if err := side.m.reader.Get(ctx, side.key, s); err != nil {
			return fmt.Errorf("reading the key %s in %s: %w", side.key, side.m.name, err)
		}
		keys[i] = s.Data["psk.txt"]
	}
	if len(keys[0]) == 0 || string(keys[0]) != string(keys[1]) {
		return fmt.Errorf("TLS handshake with the destination failed: the pre-shared keys differ")
	}
	return nil
}

// volumeOf is the storage domain and the handle of a bound claim's volume.
func (m *volsyncMember) volumeOf(ctx context.Context, key client.ObjectKey) (*Storage, string, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := m.client.Get(ctx, key, claim); err != nil {
		return nil, "", fmt.Errorf("claim %s: %w", key, err)
	}
	if claim.Spec.VolumeName == "" {
		return nil, "", fmt.Errorf("claim %s is not bound yet", key)
	}
	pv := &corev1.PersistentVolume{}
	if err := m.client.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv); err != nil {
		return nil, "", err
	}
	if pv.Spec.CSI == nil || m.storage(pv.Spec.CSI.Driver) == nil {
		return nil, "", fmt.Errorf("volume %s of claim %s is on no storage domain of %s", pv.Name, key, m.name)
	}
	return m.storage(pv.Spec.CSI.Driver), pv.Spec.CSI.VolumeHandle, nil
}

// nextRun is the first time after t that a cron schedule of the forms a LocationPair's
// interval makes runs: "*/N * * * *", "0 */N * * *" or "0 0 */N * *".
func nextRun(schedule string, t time.Time) (time.Time, error) {
	f := strings.Fields(schedule)
	step := func(s string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(s, "*/"))
		return n, strings.HasPrefix(s, "*/") && err == nil && n > 0
	}
	t = t.UTC()
	switch {
	case len(f) != 5:
	case f[1] == "*" && f[2] == "*":
		if n, ok := step(f[0]); ok {
			next := t.Truncate(time.Minute).Add(time.Minute)
			for next.Minute()%n != 0 {
				next = next.Add(time.Minute)
			}
			return next, nil
		}
	case f[0] == "0" && f[2] == "*":
		if n, ok := step(f[1]); ok {
			next := t.Truncate(time.Hour).Add(time.Hour)
			for next.Hour()%n != 0 {
				next = next.Add(time.Hour)
			}
			return next, nil
		}
	case f[0] == "0" && f[1] == "0":
		if n, ok := step(f[2]); ok {
			next := time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
			for (next.Day()-1)%n != 0 {
				next = next.AddDate(0, 0, 1)
			}
			return next, nil
		}
	}
	return time.Time{}, fmt.Errorf("schedule %q is not one the simulated VolSync runs", schedule)
}
