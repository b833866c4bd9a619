package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// A pair schedule pairs the primary with the secondary under the name of its namespace,
// protects its claims, loses the primary and checks, besides what every schedule checks:
//
//   - the pair failed over, and protects every claim again, the other way, once the
//     primary is back; or the primary came back while the failover fenced it, the failover
//     was called off, and the pair protects every claim from the primary;
//   - every write acknowledged on a volume before the sync of the replica its claim was
//     restored from started is in the restored volume;
//   - a volume the failover set aside is never released, nor the volume restored in place
//     of one whose hub PV was made Retain;
//   - a target of the primary holds no copy of a volume set aside when its Fence is lifted.

// pairKey is the key of the schedule's LocationPair.
func (r *run) pairKey() client.ObjectKey { return client.ObjectKey{Name: r.ns} }

// protect makes the pair and waits until it protects every claim of the namespace.
func (r *run) protect(ctx context.Context, st Step) error {
	pair := &schedulingv1alpha1.LocationPair{
		ObjectMeta: metav1.ObjectMeta{Name: r.ns},
		Spec: schedulingv1alpha1.LocationPairSpec{Primary: primary, Secondary: secondary,
			ReplicationInterval: st.Interval, FailoverThreshold: &metav1.Duration{Duration: st.Threshold}},
	}
	if err := r.retrying(func(ctx context.Context) error { return r.create(ctx, pair) })(ctx); err != nil {
		return err
	}
	err := await(ctx, "the pair to protect every claim", Liveness, func(ctx context.Context) error {
		return r.protecting(ctx, primary)
	})
	r.protected = time.Now()
	return err
}

// protecting tells why the pair does not yet protect every claim of the namespace from
// active.
func (r *run) protecting(ctx context.Context, active string) error {
	want, err := r.liveClaims(ctx)
	if err != nil {
		return err
	}
	p := &schedulingv1alpha1.LocationPair{}
	if err := r.hub.Get(ctx, r.pairKey(), p); err != nil {
		return err
	}
	st := p.Status
	if st.ActiveLocation != active || st.Phase != schedulingv1alpha1.PairProtecting || int(st.Volumes) != len(want) || st.ProtectedVolumes != st.Volumes {
		return fmt.Errorf("pair %s is %s in %q, %d of %d volumes protected, of %d claims; %v",
			p.Name, st.Phase, st.ActiveLocation, st.ProtectedVolumes, st.Volumes, len(want), st.Conditions)
	}
	return nil
}

// losePrimary stops the primary's members; its heal waits until the pair started to fail
// over, then starts them again. A primary that answers again while the failover still
// fences it calls the failover off: a lost primary drawn to last up to returnsFencing comes
// back as soon as the failover started, mostly while it fences; the others once it
// restores.
func (r *run) losePrimary(st Step) (start, heal func(context.Context) error) {
	var lost time.Time
	past := func(a *schedulingv1alpha1.PairAction) bool {
		return st.For <= returnsFencing || a.Progression != schedulingv1alpha1.ProgressionFencing
	}
	return func(ctx context.Context) error {
			for _, m := range primaryTargets {
				// A member under a fault of the schedule's own is lost once that heals.
				if err := await(ctx, m+" to be free of other faults", Liveness, func(context.Context) error {
					if !r.shared.occupy(m) {
						return errors.New("under another fault")
					}
					return nil
				}); err != nil {
					return err
				}
				if err := r.env.StopMember(m, st.Partition); err != nil {
					return err
				}
			}
			lost = time.Now()
			return nil
		}, func(ctx context.Context) error {
			defer func() {
				for _, m := range primaryTargets {
					r.shared.free(m)
				}
			}()
			err := await(ctx, "the pair to fail over", Liveness, func(ctx context.Context) error {
				p := &schedulingv1alpha1.LocationPair{}
				if err := r.hub.Get(ctx, r.pairKey(), p); err != nil {
					return err
				}
				// Other faults of the primary's members may have failed it over first.
				if a := p.Status.LastAction; a == nil || a.Mode != schedulingv1alpha1.Failover || a.StartTime.Time.Before(r.protected.Truncate(time.Second)) || !past(a) {
					return fmt.Errorf("pair %s is %s: %v", p.Name, p.Status.Phase, p.Status.Conditions)
				}
				return nil
			})
			if err != nil {
				r.fail("liveness: the primary lost since %s: %v", lost.Format("15:04:05.000"), err)
			}
			var started error
			for _, m := range primaryTargets {
				started = errors.Join(started, r.env.StartMember(ctx, m))
			}
			return started
		}
}

// returnsFencing: a primary lost for up to this long returns as soon as the failover started.
const returnsFencing = 2500 * time.Millisecond

// pairSettled tells why the pair has not settled: failed over and protecting every claim
// from the secondary, or, its failover called off, protecting them from the primary.
func (r *run) pairSettled(ctx context.Context) error {
	p := &schedulingv1alpha1.LocationPair{}
	if err := r.hub.Get(ctx, r.pairKey(), p); err != nil {
		return err
	}
	a := p.Status.LastAction
	if a == nil || a.Mode != schedulingv1alpha1.Failover || !a.Over() {
		return fmt.Errorf("pair %s has not failed over: %+v", p.Name, a)
	}
	if !apimeta.IsStatusConditionTrue(p.Status.Conditions, schedulingv1alpha1.ConditionPeerReady) {
		return fmt.Errorf("pair %s: the other Location is not ready to take over: %v", p.Name, p.Status.Conditions)
	}
	if a.Progression == schedulingv1alpha1.ProgressionCalledOff {
		return r.protecting(ctx, primary)
	}
	return r.protecting(ctx, secondary)
}

// watchPair follows, until ctx ends, the volumes the failover sets aside and the Fences of
// the primary's targets: when one that fenced is lifted, its target must hold no copy of a
// volume set aside.
func (r *run) watchPair(ctx context.Context) {
	fencing := map[string]string{} // the Fences seen fencing: their targets, by name
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
		fences := &storagev1alpha1.FenceList{}
		if r.hub.List(ctx, fences) != nil {
			continue
		}
		lifted := map[string]string{}
		for name, target := range fencing {
			lifted[name] = target
		}
		for _, f := range fences.Items {
			if !slices.Contains(primaryTargets, f.Spec.TargetName) {
				continue
			}
			if f.Spec.State != storagev1alpha1.Unfenced && f.DeletionTimestamp == nil {
				fencing[f.Name] = f.Spec.TargetName
				delete(lifted, f.Name)
			}
		}
		for name, target := range lifted {
			// The target's copies are read after the lift: what it holds now it held then.
			if err := r.noSetAsideCopies(ctx, name, target); err == nil || !outOfReach(err) {
				delete(fencing, name)
			}
		}
		// Read after the Fences, so that a volume set aside before a lift is known.
		_, _ = r.readSetAside(ctx)
	}
}

// readSetAside records the volumes the namespace's records say were set aside, and returns
// the records.
func (r *run) readSetAside(ctx context.Context) ([]storagev1alpha1.VolumeOwnership, error) {
	list := &storagev1alpha1.VolumeOwnershipList{}
	if err := r.hub.List(ctx, list, client.InNamespace(r.ns)); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, vo := range list.Items {
		aside := vo.Status.EarlierSetAside
		if vo.Status.SetAside != nil {
			aside = append(slices.Clone(aside), *vo.Status.SetAside)
		}
		for _, a := range aside {
			r.setAside[a.VolumeHandle] = vo.Name
		}
	}
	return list.Items, nil
}

// noSetAsideCopies records a violation if target holds a PV of a volume set aside, now that
// its Fence was lifted.
func (r *run) noSetAsideCopies(ctx context.Context, fence, target string) error {
	if _, err := r.readSetAside(ctx); err != nil {
		return err
	}
	pvs := &corev1.PersistentVolumeList{}
	if err := r.env.Member(target).Client.List(ctx, pvs); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, pv := range pvs.Items {
		if pv.Spec.CSI == nil || pv.DeletionTimestamp != nil {
			continue
		}
		if claim, ok := r.setAside[pv.Spec.CSI.VolumeHandle]; ok {
			r.errs = append(r.errs, fmt.Sprintf("Fence %s lifted while %s still had PV %s of volume %s, which the failover of claim %s set aside",
				fence, target, pv.Name, pv.Spec.CSI.VolumeHandle, claim))
		}
	}
	return nil
}

// checkRestores checks each restored claim's volume against the writes acknowledged on the
// volume it replaced, and that no volume set aside was released.
func (r *run) checkRestores(ctx context.Context) {
	var records []storagev1alpha1.VolumeOwnership
	if err := await(ctx, "the records", retryFor, func(ctx context.Context) (err error) {
		records, err = r.readSetAside(ctx)
		return err
	}); err != nil {
		r.fail("reading the records: %v", err)
		return
	}
	restored := 0
	for _, vo := range records {
		from, old := vo.Status.RestoredFrom, vo.Status.SetAside
		if from == nil || old == nil {
			continue
		}
		restored++
		pv := &corev1.PersistentVolume{}
		if err := r.read(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv); err != nil || pv.Spec.CSI == nil {
			r.fail("claim %s: its restored hub PV %s: %v", vo.Name, vo.Status.VolumeName, err)
			continue
		}
		_, storage := r.volume(pv.Spec.CSI.VolumeHandle)
		if storage == nil {
			r.fail("claim %s: the storage has no volume %s", vo.Name, pv.Spec.CSI.VolumeHandle)
			continue
		}
		records := storage.Records(pv.Spec.CSI.VolumeHandle)
		r.mu.Lock()
		if _, kept := r.kept[old.VolumeHandle]; kept {
			// The hub PV of the volume set aside was made Retain before it went (its
			// deletion is refused otherwise): the restored volume is kept too.
			r.kept[pv.Spec.CSI.VolumeHandle] = pv.Name
		}
		for _, a := range r.acks[old.VolumeHandle] {
			if a.at.Before(from.Time.Time) && !slices.Contains(records, a.record) {
				r.errs = append(r.errs, fmt.Sprintf("claim %s: write %q, acknowledged at %s on volume %s before the sync of replica %s started (%s), is not in the restored volume %s",
					vo.Name, a.record, a.at.Format("15:04:05.000"), old.VolumeHandle, from.Snapshot, from.Time.Format(time.RFC3339), pv.Spec.CSI.VolumeHandle))
				break
			}
		}
		r.mu.Unlock()
	}
	if restored == 0 && len(records) > 0 {
		r.note("no claim was restored from a replica")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for h, claim := range r.setAside {
		if v, _ := r.volume(h); v.Releases > 0 {
			r.errs = append(r.errs, fmt.Sprintf("volume %s of claim %s, set aside by the failover, was released %d times", h, claim, v.Releases))
		}
	}
}

// failoverEnd is where the pair's failover ended: Completed, or CalledOff; "" when it cannot
// be read, also through another schedule's restart of the hub.
func (r *run) failoverEnd(ctx context.Context) string {
	p := &schedulingv1alpha1.LocationPair{}
	if r.read(ctx, r.pairKey(), p) != nil || p.Status.LastAction == nil {
		return ""
	}
	return p.Status.LastAction.Progression
}

// unpair deletes the pair, once the schedule's claims are gone, and waits until it went, so
// that the next pair schedule starts from the primary again. The namespace, still being
// deleted, follows the Placement back to the primary, with nothing in it to move.
func (r *run) unpair(ctx context.Context) error {
	return await(ctx, "the pair to go", Liveness, func(ctx context.Context) error {
		p := &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}
		if err := r.hub.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
			return err
		}
		err := r.hub.Get(ctx, r.pairKey(), p)
		if err == nil {
			return errors.New("the pair is still there")
		}
		return client.IgnoreNotFound(err)
	})
}
