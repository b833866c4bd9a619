package coordination

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/coordination"
	"github.com/custody-dev/custody/fencing"
)

// scope is what one reconcile of a claim read.
type scope struct {
	// claim is as it follows its namespace; read is the claim as it was read, when following
	// changed it, else nil.
	claim     *corev1.PersistentVolumeClaim
	read      *corev1.PersistentVolumeClaim
	volume    *corev1.PersistentVolume
	ownership *storagev1alpha1.VolumeOwnership
	targets   []workloadv1alpha1.SyncTarget
	fences    []storagev1alpha1.Fence
	// leases are the targets' heartbeat Leases, by name.
	leases map[string]*coordinationv1.Lease
}

// observe reads what one step of the claim's volume depends on.
func (r *Reconciler) observe(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*scope, error) {
	s := &scope{claim: claim, ownership: &storagev1alpha1.VolumeOwnership{
		ObjectMeta: metav1.ObjectMeta{Namespace: claim.Namespace, Name: claim.Name},
	}}
	if err := r.readRecord(ctx, s.ownership); err != nil {
		return nil, err
	}
	var err error
	if s.volume, err = r.volumeOf(ctx, claim); err != nil {
		return nil, err
	}
	// Targets, Fences and Leases are only read: the cache's own objects do (a claim's
	// reconcile would otherwise copy every target of a hub of a thousand).
	targets := &workloadv1alpha1.SyncTargetList{}
	if err := r.Client.List(ctx, targets, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	s.targets = targets.Items
	fences := &storagev1alpha1.FenceList{}
	if err := r.Client.List(ctx, fences, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	s.fences = fences.Items
	leases := &coordinationv1.LeaseList{}
	if err := r.Client.List(ctx, leases, client.InNamespace(workloadv1alpha1.HeartbeatNamespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	s.leases = make(map[string]*coordinationv1.Lease, len(leases.Items))
	for i := range leases.Items {
		s.leases[leases.Items[i].Name] = &leases.Items[i]
	}
	return s, nil
}

// readRecord reads the claim's VolumeOwnership into vo from the cache or, when the cache
// does not hold the version this controller wrote last, past it: a cached record of another
// version is older than what it wrote, or holds a replica the dr controller recorded since.
// A record not found leaves vo without a UID.
func (r *Reconciler) readRecord(ctx context.Context, vo *storagev1alpha1.VolumeOwnership) error {
	return client.IgnoreNotFound(versions.Get(ctx, r.written, r.Client, r.APIReader, client.ObjectKeyFromObject(vo), vo))
}

// volumeOf finds the claim's hub PV: the one it is bound to, else the one that names it and,
// if a target upsynced it, was provisioned for it (coordination.VolumeFor).
// For a deleted claim the PV is read from the API server: its reclaim policy decides whether
// the storage is released, and an admin's Retain written just before the claim was deleted
// must count even when the cache has not shown it yet; so must a PV upsynced just before.
func (r *Reconciler) volumeOf(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	deleting := !claim.DeletionTimestamp.IsZero()
	observed := claimOf(claim)
	provisionedFor := func(pv *corev1.PersistentVolume) bool {
		return coordination.VolumeFor(claim.UID, observed, deleting, pv.Name, presences(pv))
	}
	if name := claim.Spec.VolumeName; name != "" {
		pv, err := r.getVolume(ctx, name, deleting)
		if err != nil || pv == nil || !provisionedFor(pv) {
			return nil, err
		}
		return pv, nil
	}
	list := &corev1.PersistentVolumeList{}
	if err := r.Client.List(ctx, list, client.MatchingFields{claimRefIndex: claim.Namespace + "/" + claim.Name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		pv := &list.Items[i]
		if ref := pv.Spec.ClaimRef; (ref.UID == "" || ref.UID == claim.UID) && provisionedFor(pv) {
			return pv, nil
		}
	}
	if deleting {
		return r.liveVolume(ctx, claim)
	}
	return nil, nil
}

// liveVolume reads the claim's hub PV from the API server: the one it names, else the one a
// target's syncer upsyncs for it; nil when there is none.
func (r *Reconciler) liveVolume(ctx context.Context, claim *corev1.PersistentVolumeClaim) (*corev1.PersistentVolume, error) {
	name := claim.Spec.VolumeName
	if name == "" {
		name = workloadv1alpha1.UpsyncedPVName(claim.UID)
	}
	return r.getVolume(ctx, name, true)
}

// getVolume reads the hub PV called name from the cache or, when live, the API server; nil
// when there is none.
func (r *Reconciler) getVolume(ctx context.Context, name string, live bool) (*corev1.PersistentVolume, error) {
	var reader client.Reader = r.Client
	if live {
		reader = r.APIReader
	}
	pv := &corev1.PersistentVolume{}
	if err := reader.Get(ctx, client.ObjectKey{Name: name}, pv); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	return pv, nil
}

// observation translates the objects into what package coordination reads, at now.
func (s *scope) observation(compatible coordination.CompatibleFunc, now time.Time, fenceDelay func(*workloadv1alpha1.SyncTarget, *coordinationv1.Lease) time.Duration) coordination.Observation {
	o := coordination.Observation{
		Claim:   claimOf(s.claim),
		Targets: map[string]coordination.Target{},
		Record: coordination.Record{
			Owner:           s.ownership.Status.Owner,
			Phase:           s.ownership.Status.Phase,
			Reason:          s.ownership.Status.Reason,
			OriginalReclaim: s.ownership.Status.Reclaim.Original,
			FencedOff:       s.ownership.Status.FencedOff,
			Replica:         s.ownership.Status.Replica,
			RestoredFrom:    s.ownership.Status.RestoredFrom,
			SetAside:        s.ownership.Status.SetAside,
		},
		Compatible: compatible,
		Now:        now,
	}
	if pv := s.volume; pv != nil {
		ref := pv.Spec.ClaimRef
		o.Volume = &coordination.Volume{
			Name:          pv.Name,
			BoundToClaim:  ref != nil && ref.Namespace == s.claim.Namespace && ref.Name == s.claim.Name,
			ReclaimPolicy: pv.Spec.PersistentVolumeReclaimPolicy,
			Deleting:      !pv.DeletionTimestamp.IsZero(),
			Released:      pv.Status.Phase == corev1.VolumeReleased,
			Pending:       pv.Status.Phase == corev1.VolumePending,
			On:            presences(pv),
		}
		if csi := pv.Spec.CSI; csi != nil {
			o.Volume.Driver, o.Volume.Handle = csi.Driver, csi.VolumeHandle
		}
	}
	for i := range s.targets {
		t := &s.targets[i]
		o.Targets[workloadv1alpha1.ToSyncTargetKey(t.Name)] = coordination.Target{
			Name:             t.Name,
			Ready:            t.IsReady(),
			UnreachableSince: t.UnreachableSince(),
			CanFence:         t.Spec.Fencing != nil,
			// Checked again here, from the target as it is, before a Fence is asked.
			FencingUnverified: fencing.Unverified(t),
			FenceDelay:        fenceDelay(t, s.leases[t.Name]),
			Fences:            s.fencesOf(t.Name),
			Domains:           t.Spec.StorageDomains,
			Class:             classFor(t, s.claim, s.volume),
		}
	}
	return o
}

// claimOf translates the hub claim into what package coordination reads.
func claimOf(claim *corev1.PersistentVolumeClaim) coordination.Claim {
	return coordination.Claim{
		AccessModes:      claim.Spec.AccessModes,
		VolumeName:       claim.Spec.VolumeName,
		Deleting:         !claim.DeletionTimestamp.IsZero(),
		ReleasePolicy:    corev1.PersistentVolumeReclaimPolicy(claim.Annotations[storagev1alpha1.ReleasePolicyAnnotation]),
		StorageClassName: storagev1alpha1.ClaimClass(claim.Annotations, claim.Spec.StorageClassName),
		On:               presences(claim),
		Restore:          restoreOf(claim),
		Unprotected:      storagev1alpha1.Unprotected(claim.Labels),
	}
}

// restoreOf reads the claim's restore-from annotation, <key>/<snapshot>; an empty one says
// that the switch of Locations found no replica.
func restoreOf(claim *corev1.PersistentVolumeClaim) *coordination.Restore {
	target, snapshot, asked := storagev1alpha1.RestoreFrom(claim.Annotations)
	if !asked {
		return nil
	}
	return &coordination.Restore{Target: target, Snapshot: snapshot}
}

// fencesOf is where each Fence of the target stands, by storage domain.
func (s *scope) fencesOf(target string) map[string]fencing.State {
	var out map[string]fencing.State
	for i := range s.fences {
		if f := &s.fences[i]; f.Spec.TargetName == target {
			if out == nil {
				out = map[string]fencing.State{}
			}
			out[f.Spec.Domain] = fencing.Of(f)
		}
	}
	return out
}

// presences is an object's standing on each target, as coordination reads it.
func presences(o client.Object) map[string]coordination.Presence {
	out := map[string]coordination.Presence{}
	for key, p := range workloadv1alpha1.Presences(o) {
		out[key] = coordination.Presence{State: p.State, Leaving: p.Leaving, Held: p.HeldBy(storagev1alpha1.HoldFinalizer), Downstream: p.Downstream}
	}
	return out
}

// classFor is the target's StorageClass of the claim's volume: the class the volume has where
// the claim runs (a LocationPair may map the class the claim names to another there), or else
// the class of its PV, on a target of the Location a switch takes the volume from.
func classFor(t *workloadv1alpha1.SyncTarget, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) *workloadv1alpha1.StorageClassInfo {
	if c := findClass(t, storagev1alpha1.ClaimClass(claim.Annotations, claim.Spec.StorageClassName)); c != nil || pv == nil || pv.Spec.StorageClassName == "" {
		return c
	}
	return findClass(t, &pv.Spec.StorageClassName)
}

// findClass is the target's StorageClass of that name, or its default class for nil.
func findClass(t *workloadv1alpha1.SyncTarget, name *string) *workloadv1alpha1.StorageClassInfo {
	for i := range t.Status.StorageClasses {
		c := &t.Status.StorageClasses[i]
		if (name != nil && c.Name == *name) || (name == nil && c.Default) {
			return c
		}
	}
	return nil
}

// unreachableSince is when the target whose key is key became Unreachable; zero while it
// answers or when there is none.
func (s *scope) unreachableSince(key string) time.Time {
	if t := workloadv1alpha1.TargetWithKey(s.targets, key); t != nil {
		return t.UnreachableSince()
	}
	return time.Time{}
}

func (s *scope) volumeName() string {
	if s.volume != nil {
		return s.volume.Name
	}
	return ""
}

func (s *scope) storageClassName() string {
	if n := storagev1alpha1.ClaimClass(s.claim.Annotations, s.claim.Spec.StorageClassName); n != nil {
		return *n
	}
	return ""
}
