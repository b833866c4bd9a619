package dr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/coordination/dr"
)

// keyName is the hub Secret that holds a pair's rsync-TLS pre-shared key.
func keyName(pair string) string { return "custody-pair-" + pair }

// ensureKey makes the pair's pre-shared key once: psk.txt, "<identity>:<64 hex digits>", as
// VolSync's rsync-TLS movers read it. It goes with the pair.
func (r *Reconciler) ensureKey(ctx context.Context, p *schedulingv1alpha1.LocationPair) error {
	s := &corev1.Secret{}
	err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: storagev1alpha1.KeyNamespace, Name: keyName(p.Name)}, s)
	if !apierrors.IsNotFound(err) {
		return err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	s = &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: storagev1alpha1.KeyNamespace, Name: keyName(p.Name)},
		Data:       map[string][]byte{"psk.txt": []byte("custody:" + hex.EncodeToString(secret))},
	}
	if err := controllerutil.SetOwnerReference(p, s, r.Client.Scheme()); err != nil {
		return err
	}
	return client.IgnoreAlreadyExists(r.Client.Create(ctx, s))
}

// replicate keeps a VolumeReplication for each replication the decision wants, labelled
// Sync for its source and destination so that both syncers carry it out, and deletes the
// pair's others.
func (r *Reconciler) replicate(ctx context.Context, s *scope, d dr.Decision, schedule string) error {
	wanted := map[string]bool{}
	for _, w := range d.Replications {
		wanted[w.Key()] = true
	}
	if err := inParallel(ctx, d.Replications, func(ctx context.Context, w dr.Want) error {
		return r.ensureReplication(ctx, s.pair, s.replications[w.Key()], w, schedule)
	}); err != nil {
		return err
	}
	unwanted := slices.DeleteFunc(slices.Sorted(maps.Keys(s.replications)), func(k string) bool {
		return wanted[k] || !s.replications[k].DeletionTimestamp.IsZero()
	})
	return inParallel(ctx, unwanted, func(ctx context.Context, k string) error {
		ctrl.LoggerFrom(ctx).Info("Deleting a replication the pair no longer needs", "volumeReplication", k)
		return client.IgnoreNotFound(r.Client.Delete(ctx, s.replications[k]))
	})
}

// writeParallelism bounds the writes of one kind in flight in one reconcile of a pair: a
// switch writes each volume's claim, record and replication, a hundred volumes' worth at
// once, which one at a time took 80 ms each on a hub under that load.
const writeParallelism = 16

// inParallel runs write for each item, writeParallelism at a time, and returns the first
// error; the items are independent of each other.
func inParallel[T any](ctx context.Context, items []T, write func(context.Context, T) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(writeParallelism)
	for _, item := range items {
		g.Go(func() error { return write(ctx, item) })
	}
	return g.Wait()
}

func (r *Reconciler) ensureReplication(ctx context.Context, p *schedulingv1alpha1.LocationPair, have *storagev1alpha1.VolumeReplication, w dr.Want, schedule string) error {
	spec := storagev1alpha1.VolumeReplicationSpec{Pair: p.Name, Source: w.Source, Destination: w.Destination,
		Schedule: schedule, KeySecret: keyName(p.Name), ManualTrigger: w.ManualTrigger, KeepImages: w.KeepImages, StorageClassName: w.Class}
	labels := map[string]string{schedulingv1alpha1.PairLabel: p.Name}
	for _, key := range []string{w.Source, w.Destination} {
		labels[workloadv1alpha1.StateLabel(key)] = string(workloadv1alpha1.ResourceStateSync)
	}
	if have == nil {
		vr := &storagev1alpha1.VolumeReplication{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: w.Claim, Labels: labels}, Spec: spec}
		if err := controllerutil.SetOwnerReference(p, vr, r.Client.Scheme()); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Replicating a volume", "claim", client.ObjectKeyFromObject(vr), "source", w.Source, "destination", w.Destination)
		return client.IgnoreAlreadyExists(r.Client.Create(ctx, vr))
	}
	if !have.DeletionTimestamp.IsZero() || equality.Semantic.DeepEqual(have.Spec, spec) && maps.Equal(have.Labels, labels) {
		// One being deleted keeps the labels of the targets whose finalizers hold it, until
		// they let go; the new one is made once it is gone.
		return nil
	}
	patch := client.MergeFromWithOptions(have.DeepCopy(), client.MergeFromWithOptimisticLock{})
	have.Spec, have.Labels = spec, labels
	return r.Client.Patch(ctx, have, patch)
}

// recordVolumes writes onto the claims' VolumeOwnerships what the pair knows of each: the
// replica the decision took, and the Replicated condition, each under a field manager of its
// own, so that neither write sets the other field back to a value read from the cache.
func (r *Reconciler) recordVolumes(ctx context.Context, s *scope, d dr.Decision) error {
	return inParallel(ctx, slices.Sorted(maps.Keys(s.ownerships)), func(ctx context.Context, k string) error {
		vo := s.ownerships[k]
		key := metav1.ObjectMeta{Namespace: vo.Namespace, Name: vo.Name}
		if replica, ok := d.Replicas[k]; ok {
			applied := &storagev1alpha1.VolumeOwnership{ObjectMeta: key, Status: storagev1alpha1.VolumeOwnershipStatus{Replica: &replica}}
			if err := status.Apply(ctx, r.Client, applied, fieldOwner); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		if d.VolumeConditions == nil {
			return nil // the pair cannot tell now: the conditions stay as they are
		}
		had := meta.FindStatusCondition(vo.Status.Conditions, storagev1alpha1.ConditionReplicated)
		c, ok := d.VolumeConditions[k]
		if ok && had != nil && had.Status == c.Status && had.Reason == c.Reason && had.Message == c.Message || !ok && had == nil {
			return nil
		}
		applied := &storagev1alpha1.VolumeOwnership{ObjectMeta: key}
		if ok {
			applied.Status.Conditions = []metav1.Condition{status.Condition(vo.Status.Conditions, c)}
		}
		return client.IgnoreNotFound(status.Apply(ctx, r.Client, applied, conditionOwner))
	})
}

// quiesce stops the workloads of the pair's namespaces while the decision says so, with the
// namespace annotation the syncers follow, and starts them again after.
func (r *Reconciler) quiesce(ctx context.Context, s *scope, d dr.Decision) error {
	for _, ns := range s.namespaces {
		v, set := ns.Annotations[schedulingv1alpha1.QuiesceAnnotation]
		if d.Quiesce == (set && v == s.pair.Name) {
			continue
		}
		patch := client.MergeFrom(ns.DeepCopy())
		if d.Quiesce {
			metav1.SetMetaDataAnnotation(&ns.ObjectMeta, schedulingv1alpha1.QuiesceAnnotation, s.pair.Name)
		} else {
			delete(ns.Annotations, schedulingv1alpha1.QuiesceAnnotation)
		}
		if err := r.Client.Patch(ctx, ns, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Quiesced a namespace's workloads", "namespace", ns.Name, "quiesced", d.Quiesce)
	}
	return nil
}

// askRestores writes the restore-from annotations the decision asks for on the claims, and
// removes those of the restores that are over.
func (r *Reconciler) askRestores(ctx context.Context, s *scope, d dr.Decision) error {
	set := func(ctx context.Context, k string, f func(*corev1.PersistentVolumeClaim)) error {
		c := s.claims[k]
		if c == nil {
			return nil
		}
		patch := client.MergeFrom(c.DeepCopy())
		f(c)
		return client.IgnoreNotFound(r.Client.Patch(ctx, c, patch))
	}
	if err := inParallel(ctx, slices.Sorted(maps.Keys(d.Restores)), func(ctx context.Context, k string) error {
		// The class goes in the same write: the claim's copy is made in it from the replica.
		class, mapped := d.Classes[k]
		if err := set(ctx, k, func(c *corev1.PersistentVolumeClaim) {
			metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.RestoreAnnotation, d.Restores[k])
			switch {
			case mapped && class != "":
				metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.StorageClassAnnotation, class)
			case mapped:
				delete(c.Annotations, storagev1alpha1.StorageClassAnnotation)
			}
		}); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Asked to restore a claim", "claim", k, "from", d.Restores[k], "mappedClass", class)
		return nil
	}); err != nil {
		return err
	}
	return inParallel(ctx, d.Unrestores, func(ctx context.Context, k string) error {
		if err := set(ctx, k, func(c *corev1.PersistentVolumeClaim) { delete(c.Annotations, storagev1alpha1.RestoreAnnotation) }); err != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("A claim's restore is over", "claim", k)
		return nil
	})
}

// ensureFences holds a Fence of each target the decision fences, in each of its storage
// domains: the fencing controller executes it, also while the target answers, as the pair
// holds it. Fences the pair held of other targets are let go of: the fencing controller lifts
// each once its target is back and clean.
func (r *Reconciler) ensureFences(ctx context.Context, s *scope, keys []string) error {
	holder := storagev1alpha1.PairHolder(s.pair.Name)
	// held are the Fences the pair needs, by name.
	held := map[string]storagev1alpha1.FenceSpec{}
	for _, t := range s.targets {
		if !slices.Contains(keys, workloadv1alpha1.ToSyncTargetKey(t.Name)) {
			continue
		}
		for _, domain := range t.Spec.StorageDomains {
			held[storagev1alpha1.FenceName(t.Name, domain)] = storagev1alpha1.FenceSpec{
				TargetName: t.Name, Domain: domain, State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network, HeldBy: holder}
		}
	}
	for i := range s.fences {
		f := &s.fences[i]
		switch _, want := held[f.Name]; {
		case want && f.Spec.HeldBy == "" && f.DeletionTimestamp.IsZero():
			if err := r.holdFence(ctx, f, holder); err != nil {
				return err
			}
		case !want && f.Spec.HeldBy == holder:
			if err := r.holdFence(ctx, f, ""); err != nil {
				return err
			}
		}
		delete(held, f.Name)
	}
	for name, spec := range held {
		f := &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: spec}
		if err := r.Client.Create(ctx, f); client.IgnoreAlreadyExists(err) != nil {
			return err
		}
	}
	return nil
}

// holdFence sets the Fence's holder, which wants it Fenced; "" lets go of it.
func (r *Reconciler) holdFence(ctx context.Context, f *storagev1alpha1.Fence, holder string) error {
	patch := client.MergeFromWithOptions(f.DeepCopy(), client.MergeFromWithOptimisticLock{})
	f.Spec.HeldBy = holder
	if holder != "" {
		f.Spec.State = storagev1alpha1.Fenced
	}
	ctrl.LoggerFrom(ctx).Info("Holding a Fence", "fence", f.Name, "heldBy", holder)
	return client.IgnoreNotFound(r.Client.Patch(ctx, f, patch))
}

// writeStatus applies the decision to the pair's status.
func (r *Reconciler) writeStatus(ctx context.Context, p *schedulingv1alpha1.LocationPair, d dr.Decision) error {
	st := schedulingv1alpha1.LocationPairStatus{
		ActiveLocation: d.Active, Phase: d.Phase, Volumes: d.Volumes, ProtectedVolumes: d.Protected,
		LastAction: d.Action, History: d.History, ObservedGeneration: p.Generation,
	}
	if !d.OldestLastSync.IsZero() {
		st.OldestLastSyncTime = &metav1.Time{Time: d.OldestLastSync}
	}
	for _, c := range d.Conditions {
		c.ObservedGeneration = p.Generation
		st.Conditions = append(st.Conditions, status.Condition(p.Status.Conditions, c))
	}
	if equality.Semantic.DeepEqual(p.Status, st) {
		return nil
	}
	return r.applyStatus(ctx, p, st)
}

// applyStatus writes the pair's status, and tells of a change of phase in an event.
func (r *Reconciler) applyStatus(ctx context.Context, p *schedulingv1alpha1.LocationPair, st schedulingv1alpha1.LocationPairStatus) error {
	if p.Status.Phase != st.Phase {
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, string(st.Phase), "Phase", "%s: active Location %s", st.Phase, st.ActiveLocation)
	}
	applied := &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Status: st}
	if err := status.Apply(ctx, r.Client, applied, fieldOwner); err != nil {
		return err
	}
	r.written.Wrote(client.ObjectKeyFromObject(p), applied.ResourceVersion)
	return nil
}

// unreport clears the status of the workloads the decision names: the Location a switch left
// wrote it, and the target that runs each now writes its own, which the switch waits for.
func (r *Reconciler) unreport(ctx context.Context, s *scope, d dr.Decision) error {
	for _, k := range d.Unreported {
		obj := s.workloads[k]
		if obj == nil {
			continue
		}
		patch, err := clearStatus(obj)
		if err != nil {
			return err
		}
		if err := r.Client.Status().Patch(ctx, obj, patch); client.IgnoreNotFound(err) != nil {
			return err
		}
		ctrl.LoggerFrom(ctx).Info("Cleared a workload's status the Location left reported", "workload", k)
	}
	return nil
}

// clearStatus is the merge patch that clears a workload's status, all but its collisionCount:
// the API server refuses a Deployment's or StatefulSet's collisionCount taken away or made
// smaller.
func clearStatus(obj client.Object) (client.Patch, error) {
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	st, _, _ := unstructured.NestedMap(u, "status")
	cleared := map[string]any{}
	for k := range st {
		if k != "collisionCount" {
			cleared[k] = nil
		}
	}
	b, err := json.Marshal(map[string]any{"status": cleared})
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.MergePatchType, b), nil
}
