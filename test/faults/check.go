package faults

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// settled tells why the system has not settled yet, or nil once it has: every target Ready
// and uncordoned, every fence lifted, the namespace on one target, and every claim the
// schedule left Bound there alone, in the hub's labels and in the storage.
func (r *run) settled(ctx context.Context) error {
	if err := r.bedSettled(ctx); err != nil {
		return err
	}
	if r.s.paired() {
		if err := r.pairSettled(ctx); err != nil {
			return err
		}
	}
	owner, err := r.namespaceTarget(ctx)
	if err != nil {
		return err
	}
	want, err := r.liveClaims(ctx)
	if err != nil {
		return err
	}
	list := &corev1.PersistentVolumeClaimList{}
	if err := r.hub.List(ctx, list, client.InNamespace(r.ns)); err != nil {
		return err
	}
	var names []string
	for i := range list.Items {
		names = append(names, list.Items[i].Name)
		if err := r.claimSettled(ctx, &list.Items[i], owner); err != nil {
			return err
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		return fmt.Errorf("the namespace has claims %v, not %v", names, want)
	}
	return nil
}

// bedSettled tells why the schedule's part of the bed is not back to normal: a target of its
// Locations not Ready or cordoned, or a fence of one not lifted.
func (r *run) bedSettled(ctx context.Context) error {
	ts := &workloadv1alpha1.SyncTargetList{}
	if err := r.hub.List(ctx, ts); err != nil {
		return err
	}
	ours := slices.DeleteFunc(ts.Items, func(t workloadv1alpha1.SyncTarget) bool { return !slices.Contains(r.targets, t.Name) })
	for _, t := range ours {
		if !t.IsReady() || t.Spec.Unschedulable {
			return fmt.Errorf("target %s is not Ready and schedulable", t.Name)
		}
	}
	fences := &storagev1alpha1.FenceList{}
	if err := r.hub.List(ctx, fences); err != nil {
		return err
	}
	for _, f := range fences.Items {
		if slices.Contains(r.targets, f.Spec.TargetName) && f.Status.Phase != storagev1alpha1.FenceUnfenced {
			return fmt.Errorf("fence %s is %s", f.Name, f.Status.Phase)
		}
	}
	for _, s := range r.storages {
		for _, t := range r.targets {
			if s.Fenced(t) {
				return fmt.Errorf("storage %s still fences %s", s.Name(), t)
			}
		}
	}
	return nil
}

// namespaceTarget returns the one target the namespace runs on. A target it left may still
// be deleting its copy: the member's namespace controller waits five seconds before it starts.
// Bed.Drained checks, after the batch, that every target let go.
func (r *run) namespaceTarget(ctx context.Context) (string, error) {
	ns := &corev1.Namespace{}
	if err := r.hub.Get(ctx, client.ObjectKey{Name: r.ns}, ns); err != nil {
		return "", err
	}
	var on []string
	for key, p := range workloadv1alpha1.Presences(ns) {
		if p.Synced() && !p.Leaving {
			on = append(on, key)
		}
	}
	if len(on) != 1 {
		return "", fmt.Errorf("namespace %s is on %v, in Sync and not leaving on %v", r.ns, workloadv1alpha1.Targets(ns), on)
	}
	return on[0], nil
}

// liveClaims are the names of the claims the schedule made and did not delete, sorted: its
// own, and its StatefulSet's.
func (r *run) liveClaims(ctx context.Context) ([]string, error) {
	r.mu.Lock()
	var want []string
	for _, c := range r.s.claims() {
		if _, deleted := r.deleteAsked[c]; !deleted {
			want = append(want, c)
		}
	}
	r.mu.Unlock()
	for _, st := range r.s.Steps {
		if st.Kind != CreateStatefulSet {
			continue
		}
		set := &appsv1.StatefulSet{}
		if err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: st.Name}, set); err != nil {
			return nil, fmt.Errorf("StatefulSet %s: %w", st.Name, err)
		}
		for i := range st.Replicas {
			want = append(want, fmt.Sprintf("data-%s-%d", st.Name, i))
		}
	}
	slices.Sort(want)
	return want, nil
}

// claimSettled tells why the claim is not Bound on the owner alone yet.
func (r *run) claimSettled(ctx context.Context, c *corev1.PersistentVolumeClaim, owner string) error {
	key := client.ObjectKeyFromObject(c)
	vo := &storagev1alpha1.VolumeOwnership{}
	if err := r.hub.Get(ctx, key, vo); err != nil {
		return fmt.Errorf("VolumeOwnership %s: %w", key, err)
	}
	st := vo.Status
	if c.DeletionTimestamp != nil || !st.Settled() || c.Spec.VolumeName == "" {
		return fmt.Errorf("claim %s is %s/%s: %s%s", key, st.Phase, st.Reason, st.Message, r.protocolState(ctx, c))
	}
	pv := &corev1.PersistentVolume{}
	if err := r.hub.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv); err != nil {
		return err
	}
	for _, obj := range []client.Object{c, pv} {
		if on := workloadv1alpha1.Targets(obj); !slices.Equal(on, []string{owner}) || !slices.Equal(synced(obj), on) {
			return fmt.Errorf("%T %s is on %v, synced on %v, not on %s alone", obj, obj.GetName(), on, synced(obj), owner)
		}
	}
	if pv.Spec.CSI == nil {
		return fmt.Errorf("hub PV %s has no CSI volume", pv.Name)
	}
	if v, _ := r.volume(pv.Spec.CSI.VolumeHandle); !slices.Equal(v.Holders, []string{owner}) {
		return fmt.Errorf("volume of claim %s is attached to %v, not to %s", key, v.Holders, owner)
	}
	return nil
}

// protocolState spells out the protocol's marks on the claim and its PV, which a liveness
// failure needs to be understood once the bed is gone.
func (r *run) protocolState(ctx context.Context, c *corev1.PersistentVolumeClaim) string {
	marks := func(obj client.Object) string {
		var out []string
		for _, m := range []map[string]string{obj.GetLabels(), obj.GetAnnotations()} {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if strings.Contains(k, "custody.dev") {
					out = append(out, k+"="+m[k])
				}
			}
		}
		return fmt.Sprintf("%s %s: %s; finalizers %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), strings.Join(out, " "), obj.GetFinalizers())
	}
	c.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"))
	s := "\n            " + marks(c)
	pv := &corev1.PersistentVolume{}
	if c.Spec.VolumeName != "" && r.hub.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv) == nil {
		pv.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PersistentVolume"))
		s += "\n            " + marks(pv)
	}
	return s
}

// synced returns the targets the object is in Sync or Upsync on.
func synced(obj client.Object) []string {
	var out []string
	for key, p := range workloadv1alpha1.Presences(obj) {
		if p.Synced() {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// checkWrites records every acknowledged write missing from a volume of the namespace.
func (r *run) checkWrites() {
	for h, claim := range r.obs.handles(r.ns) {
		if _, storage := r.volume(h); storage == nil {
			r.fail("volume %s of claim %s is in no storage", h, claim)
		} else if lost := storage.LostWrites(h); len(lost) > 0 {
			r.fail("volume %s of claim %s lost %d acknowledged writes, the first %q", h, claim, len(lost), lost[0])
		}
	}
}

// cleanUp deletes the StatefulSets and claims, waits until every claim is gone and every
// volume not kept released, and deletes the hub PVs kept with Retain, the Placement and the
// namespace.
func (r *run) cleanUp(ctx context.Context) error {
	sets := &appsv1.StatefulSetList{}
	claims := &corev1.PersistentVolumeClaimList{}
	err := await(ctx, "the deletions", retryFor, func(ctx context.Context) error {
		if err := r.hub.DeleteAllOf(ctx, &appsv1.StatefulSet{}, client.InNamespace(r.ns)); err != nil {
			return err
		}
		if err := r.hub.List(ctx, claims, client.InNamespace(r.ns)); err != nil {
			return err
		}
		for _, c := range claims.Items {
			if err := r.deleteClaim(ctx, c.Name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Faults of the schedules beside this one may hit the bed while it cleans up: each wait
	// has Liveness from the last heal, as settling has.
	if err := awaitUntil(ctx, "the claims to go", r.settleBound(time.Now()), func(ctx context.Context) error {
		if err := r.hub.List(ctx, claims, client.InNamespace(r.ns)); err != nil {
			return err
		}
		if err := r.hub.List(ctx, sets, client.InNamespace(r.ns)); err != nil {
			return err
		}
		if n := len(claims.Items) + len(sets.Items); n > 0 {
			return fmt.Errorf("%d claims and StatefulSets left, the first %s", n, r.first(ctx, claims.Items, sets.Items))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := awaitUntil(ctx, "the volumes to be released", r.settleBound(time.Now()), r.released); err != nil {
		return err
	}
	// The namespace and the Placement go in the background, while the next schedule runs.
	return await(ctx, "the namespace's deletion", retryFor, func(ctx context.Context) error {
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}},
			&schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: r.ns}},
		}
		for _, pv := range append(slices.Collect(maps.Values(r.kept)), slices.Collect(maps.Values(r.orphaned))...) {
			objs = append(objs, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv}})
		}
		for _, obj := range objs {
			if err := r.hub.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("deleting %T %s: %w", obj, obj.GetName(), err)
			}
		}
		return nil
	})
}

// released tells which volume of the namespace is not released yet. Once its claim is gone
// a volume is released, or kept: by its hub PV's Retain, set aside by a failover, or because
// the claim went while no target had a copy to release it through, in which case the hub PV
// stays Released, naming the storage.
func (r *run) released(ctx context.Context) error {
	kept := r.keptHandles()
	for h, claim := range r.obs.handles(r.ns) {
		r.mu.Lock()
		_, setAside := r.setAside[h]
		r.mu.Unlock()
		if v, _ := r.volume(h); kept[h] || setAside || !v.Deleted.IsZero() {
			continue
		}
		pv := &corev1.PersistentVolume{}
		if err := r.hub.Get(ctx, client.ObjectKey{Name: r.obs.hubPV(h)}, pv); err != nil {
			return fmt.Errorf("volume %s of claim %s is not released, and its hub PV: %w", h, claim, err)
		}
		if pv.Status.Phase != corev1.VolumeReleased || len(workloadv1alpha1.Targets(pv)) > 0 {
			return fmt.Errorf("volume %s of claim %s is not released, and its hub PV %s is %s on %v", h, claim, pv.Name, pv.Status.Phase, workloadv1alpha1.Targets(pv))
		}
		r.mu.Lock()
		r.orphaned[h] = pv.Name
		r.mu.Unlock()
	}
	return nil
}

// keptHandles are the handles of the hub PVs kept with Retain.
func (r *run) keptHandles() map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]bool{}
	for h := range r.kept {
		out[h] = true
	}
	return out
}

// checkInvariants records what the storage's ledger and the observer saw break, for the
// volumes and objects of the namespace.
func (r *run) checkInvariants() {
	kept := r.keptHandles()
	handles := r.obs.handles(r.ns)
	for _, s := range r.storages {
		for _, v := range s.Violations() {
			if _, ours := handles[v.Handle]; ours {
				r.fail("storage %s: %s", s.Name(), v)
			}
		}
	}
	for _, b := range r.obs.protocolBreaches(r.ns) {
		r.fail("invariant 1: %s", b)
	}
	for h, claim := range handles {
		v, _ := r.volume(h)
		switch {
		case kept[h] && v.Releases > 0:
			r.fail("invariant 3: volume %s of claim %s was released %d times though its hub PV says Retain", h, claim, v.Releases)
		case v.Releases > 1:
			r.fail("volume %s of claim %s was released %d times", h, claim, v.Releases)
		}
		r.mu.Lock()
		asked := r.deleteAsked[claim]
		r.mu.Unlock()
		for _, d := range r.obs.earlyDeletes(h, v.ProvisionedIn, asked) {
			r.fail("invariant 4: volume %s of claim %s: member PV %s, before its claim's deletion was asked for", h, claim, d)
		}
	}
}

// first describes the first claim left, with its VolumeOwnership and hub PV, or else the
// first StatefulSet.
func (r *run) first(ctx context.Context, claims []corev1.PersistentVolumeClaim, sets []appsv1.StatefulSet) string {
	if len(claims) == 0 {
		return "StatefulSet " + sets[0].Name
	}
	c := &claims[0]
	out := "claim " + c.Name + " " + meta(c)
	vo := &storagev1alpha1.VolumeOwnership{}
	if err := r.hub.Get(ctx, client.ObjectKeyFromObject(c), vo); err == nil {
		out += fmt.Sprintf("; VolumeOwnership %s/%s: %s", vo.Status.Phase, vo.Status.Reason, vo.Status.Message)
	}
	pv := &corev1.PersistentVolume{}
	if err := r.hub.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv); err == nil {
		out += "; hub PV " + pv.Name + " " + meta(pv)
	}
	return out + r.copies(ctx, c)
}

// copies describes the claim's copy in each member it is synced to, and the member's pods
// that use it: what holds a claim that does not go (a pod that its member's nodes never let
// go, say), which the hub does not show.
func (r *run) copies(ctx context.Context, c *corev1.PersistentVolumeClaim) string {
	hubID, err := workloadv1alpha1.ReadHubIdentity(ctx, r.hub)
	if err != nil {
		return ""
	}
	out, on := "", synced(c)
	for _, m := range r.env.Members {
		key := workloadv1alpha1.ToSyncTargetKey(m.Name)
		if !slices.Contains(on, key) {
			continue
		}
		ns := transform.Target{Key: key, Hub: hubID}.Namespace(c.Namespace)
		copied := &corev1.PersistentVolumeClaim{}
		if err := m.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: c.Name}, copied); err != nil {
			out += fmt.Sprintf("; no copy in %s: %v", m.Name, err)
			continue
		}
		out += fmt.Sprintf("; copy in %s %s, deleted at %v %s", m.Name, copied.Status.Phase, copied.DeletionTimestamp, meta(copied))
		pods := &corev1.PodList{}
		if err := m.Client.List(ctx, pods, client.InNamespace(ns)); err != nil {
			continue
		}
		for _, pod := range pods.Items {
			if slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
				return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == c.Name
			}) {
				out += fmt.Sprintf(", used by pod %s %s on node %q, deleted at %v", pod.Name, pod.Status.Phase, pod.Spec.NodeName, pod.DeletionTimestamp)
			}
		}
	}
	return out
}

// meta shows an object's finalizers, labels and annotations.
func meta(obj client.Object) string {
	return fmt.Sprintf("(finalizers %v, labels %v, annotations %v)", obj.GetFinalizers(), obj.GetLabels(), obj.GetAnnotations())
}
