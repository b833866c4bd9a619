package coordination

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// Decide returns the next step for one volume.
func Decide(o Observation) Decision {
	d := Decision{Owner: o.Record.Owner, Reclaim: storagev1alpha1.ReclaimStatus{Original: o.Record.OriginalReclaim},
		RestoredFrom: o.Record.RestoredFrom, SetAside: o.Record.SetAside}
	d.Class, d.Domain = classify(o)
	d.FencedOff = stillFenced(o, d.Domain)
	if d.Reclaim.Original == "" && o.Volume != nil {
		d.Reclaim.Original = o.Volume.ReclaimPolicy
	}
	for _, k := range sortedKeys(o.Claim.On) {
		if p := o.Claim.On[k]; p.Leaving && !p.Synced() {
			d.Actions = append(d.Actions, Action{Kind: DropClaim, Target: k})
		}
	}
	switch {
	case o.Claim.Deleting:
		deleting(o, &d)
	case restoring(o, d.Domain):
		restore(o, &d)
	case o.Volume == nil:
		provisioning(o, &d)
	case upsyncing(o.Volume) != "":
		bind(o, &d)
	case d.Class == storagev1alpha1.Shared:
		share(o, &d)
	default:
		own(o, &d)
	}
	// A copy is Retain while the volume lives on a target, or is given to one in this
	// decision (as the next decision, which sees the copy, would record: the record is not
	// written again for the policy alone), unless the owner lets the claim go with its
	// release policy (deleting).
	held := o.Volume != nil && len(o.Volume.On) > 0
	if d.Reclaim.Current == "" && (held || slices.ContainsFunc(d.Actions, func(a Action) bool { return a.Kind == SyncVolume })) {
		d.Reclaim.Current = corev1.PersistentVolumeReclaimRetain
	}
	return d
}

// classify derives the class from the access modes and the StorageClass's domain as the
// owner (or, before there is one, any target) reports it.
func classify(o Observation) (storagev1alpha1.VolumeClass, string) {
	class := classOf(o, o.Record.Owner)
	for _, k := range sortedKeys(o.Targets) {
		if class != nil {
			break
		}
		class = classOf(o, k)
	}
	return kind(o, class)
}

// kind is the class of the claim's volume in a StorageClass (nil while no target reports
// one), and its storage domain.
func kind(o Observation, class *workloadv1alpha1.StorageClassInfo) (storagev1alpha1.VolumeClass, string) {
	if class != nil && class.Domain == "" {
		return storagev1alpha1.Internal, ""
	}
	domain := ""
	if class != nil {
		domain = class.Domain
	}
	for _, m := range o.Claim.AccessModes {
		if m == corev1.ReadWriteMany || m == corev1.ReadOnlyMany {
			return storagev1alpha1.Shared, domain
		}
	}
	return storagev1alpha1.Owned, domain
}

func classOf(o Observation, key string) *workloadv1alpha1.StorageClassInfo {
	if t, ok := o.Targets[key]; ok {
		return t.Class
	}
	return nil
}

// provisioning: no hub PV yet. One target provisions the volume; the claim is held there
// until the PV came up and was made Retain.
func provisioning(o Observation, d *Decision) {
	if synced := syncedKeys(o.Claim.On); len(synced) > 0 {
		p := synced[0]
		d.Phase, d.Owner = storagev1alpha1.Provisioning, p
		if o.Claim.On[p].Leaving {
			// Nothing came up to the hub yet: let the claim go. The syncer makes a volume the
			// member may have provisioned Retain before it deletes the claim.
			d.Reason, d.Message = storagev1alpha1.ReasonWaitingForDetach, "the claim leaves "+p+" before its volume came up; waiting for it to go"
			leave(o, d, p)
			return
		}
		d.Reason, d.Message = storagev1alpha1.ReasonProvisioning, "the volume is being provisioned on "+p
		hold(o, d, p)
		return
	}
	candidates := slices.DeleteFunc(placedKeys(o.Claim.On), func(k string) bool {
		t := o.Targets[k]
		return !t.Ready || t.Class == nil || !reaches(t, d.Domain)
	})
	if len(candidates) == 0 {
		d.Phase, d.Owner = storagev1alpha1.Pending, ""
		placed := placedKeys(o.Claim.On)
		switch {
		case len(placed) == 0:
			d.Reason, d.Message = storagev1alpha1.ReasonWaitingForPlacement, "the claim's namespace is not placed"
		case !slices.ContainsFunc(placed, func(k string) bool { return o.Targets[k].Class != nil }):
			d.Reason, d.Message = storagev1alpha1.ReasonStorageClassMissing, missingClass(o.Claim.StorageClassName, placed)
		default:
			d.Reason, d.Message = storagev1alpha1.ReasonNoProvisioningTarget, "no Ready target of the claim reaches its storage class"
		}
		return
	}
	p := candidates[0]
	if slices.Contains(candidates, o.Record.Owner) {
		p = o.Record.Owner
	}
	d.Phase, d.Owner = storagev1alpha1.Provisioning, p
	d.Reason, d.Message = storagev1alpha1.ReasonProvisioning, "provisioning on "+p
	d.Actions = append(d.Actions, Action{Kind: Hold, Target: p}, Action{Kind: SyncClaim, Target: p})
}

// missingClass says that none of the targets has the claim's class, by name, or a default
// class when the claim names none.
func missingClass(name *string, targets []string) string {
	on := strings.Join(targets, ", ")
	if name == nil {
		return fmt.Sprintf("no target of the claim's namespace (%s) has a default storage class; name one in spec.storageClassName", on)
	}
	return fmt.Sprintf("no target of the claim's namespace (%s) has storage class %q", on, *name)
}

// upsyncing returns the target whose syncer is bringing the PV up, if any.
func upsyncing(v *Volume) string {
	for _, k := range sortedKeys(v.On) {
		if v.On[k].State == workloadv1alpha1.ResourceStateUpsync {
			return k
		}
	}
	return ""
}

// bind: the provisioned PV came up. Bind hub claim and PV, record the original policy, and
// switch the PV to Sync, from which on its syncer keeps the copy Retain. A hub PV that its
// syncer made a moment ago waits for the status the syncer reports next, unless the target
// stopped answering: patched before, at the version the report replaces, it would be refused.
func bind(o Observation, d *Decision) {
	u := upsyncing(o.Volume)
	d.Phase, d.Owner = storagev1alpha1.Upsyncing, u
	d.Reason, d.Message = storagev1alpha1.ReasonBinding, "binding the volume provisioned on "+u
	if o.Volume.Pending && o.Targets[u].Ready {
		return
	}
	keep := keptPolicy(o)
	if !o.Volume.BoundToClaim || o.Claim.VolumeName != o.Volume.Name || keep != "" && o.Volume.ReclaimPolicy != keep {
		d.Actions = append(d.Actions, Action{Kind: BindClaim, Policy: keep})
	}
	hold(o, d, u)
	d.Actions = append(d.Actions, Action{Kind: SyncVolume, Target: u})
}

// share: a shared volume goes, pre-bound, to every target of its namespace that reaches its
// domain, and leaves the targets the namespace leaves.
func share(o Observation, d *Decision) {
	d.Phase, d.Reason, d.Message = storagev1alpha1.Bound, storagev1alpha1.ReasonInUse, "shared by the targets of its namespace"
	var users []string
	for _, k := range placedKeys(o.Claim.On) {
		if !reaches(o.Targets[k], d.Domain) {
			d.Reason, d.Message = storagev1alpha1.ReasonDomainUnreachable, fmt.Sprintf("target %s does not reach storage domain %s", k, d.Domain)
			continue
		}
		users = append(users, k)
		syncOn(o, d, k)
	}
	for _, k := range holders(o) {
		if !slices.Contains(users, k) {
			leave(o, d, k)
		}
	}
	// With no user left, the owner stays the last one, as an owned volume's does while it has
	// nowhere to go: a kept hub PV names it.
	if len(users) > 0 && !slices.Contains(users, d.Owner) {
		d.Owner = users[0]
	}
	d.Sharers = slices.DeleteFunc(users, func(k string) bool { return k == d.Owner })
}

// own: an owned or internal volume has one holder at a time. It moves only after the holder
// let go of it: its state labels on the claim and the PV are gone.
func own(o Observation, d *Decision) {
	held := holders(o)
	switch len(held) {
	case 0:
		next, reason, msg := nextOwner(o, d, "")
		if next == "" {
			d.Phase, d.Reason, d.Message = storagev1alpha1.Moving, reason, msg
			return
		}
		d.Phase, d.Owner = storagev1alpha1.Bound, next
		d.Reason, d.Message = storagev1alpha1.ReasonMoved, "moved to "+next
		syncOn(o, d, next)
	case 1:
		h := held[0]
		d.Owner = h
		if p, ok := o.Claim.On[h]; ok && !p.Leaving {
			d.Phase, d.Reason, d.Message = storagev1alpha1.Bound, storagev1alpha1.ReasonInUse, "in use on "+h
			if r := o.Record; r.Phase == storagev1alpha1.Bound && r.Reason == storagev1alpha1.ReasonMoved && r.Owner == h {
				// A volume moved to h stays recorded so: the record is not written again.
				d.Reason, d.Message = storagev1alpha1.ReasonMoved, "moved to "+h
			}
			syncOn(o, d, h)
			return
		}
		depart(o, d, h)
	default:
		d.Phase, d.Reason = storagev1alpha1.Bound, storagev1alpha1.ReasonMultipleHolders
		d.Message = fmt.Sprintf("held by %v at once; waiting for all but one to let go", held)
		if o.Record.Phase == storagev1alpha1.Moving {
			d.Phase = storagev1alpha1.Moving
		}
		// Only a race of placements makes two holders (a target given the claim while
		// another's copy came up). The holders the namespace left are asked to let go, as
		// a departing owner is, or fenced when lost; the volume then stays with, or moves
		// to, a placed one.
		for _, k := range held {
			p, ok := o.Claim.On[k]
			t := o.Targets[k]
			switch {
			case ok && !p.Leaving:
			case d.Class == storagev1alpha1.Owned && fencing.Lost(t.UnreachableSince, o.Now, t.FenceDelay):
				ownerLost(o, d, k, t)
			default:
				leave(o, d, k)
				if d.Class == storagev1alpha1.Owned {
					recheckWhenLost(o, d, t)
				}
			}
		}
	}
}

// recheckWhenLost has the decision taken again when t, which does not answer, is lost: it is
// then fenced instead of waited for, and only time tells.
func recheckWhenLost(o Observation, d *Decision, t Target) {
	if due := fencing.LostIn(t.UnreachableSince, o.Now, t.FenceDelay); due > 0 && (d.Recheck == 0 || due < d.Recheck) {
		d.Recheck = due
	}
}

// depart lets the owner h go when the volume may leave it: not an internal volume, and not
// towards a target whose storage class differs.
func depart(o Observation, d *Decision, h string) {
	if d.Class == storagev1alpha1.Internal {
		d.Phase, d.Reason = storagev1alpha1.Bound, storagev1alpha1.ReasonInternalVolumeCannotMove
		d.Message = "the volume lives inside " + h + " and moves only by copying; it stays until a copy exists"
		hold(o, d, h)
		return
	}
	if _, reason, msg := nextOwner(o, d, h); reason == storagev1alpha1.ReasonStorageClassMismatch {
		d.Phase, d.Reason, d.Message = storagev1alpha1.Bound, reason, msg
		hold(o, d, h)
		return
	}
	t := o.Targets[h]
	if d.Class == storagev1alpha1.Owned && fencing.Lost(t.UnreachableSince, o.Now, t.FenceDelay) {
		ownerLost(o, d, h, t)
		if slices.Contains(d.Actions, Action{Kind: ReleaseFenced, Target: h}) {
			handOver(o, d, h)
		}
		return
	}
	d.Phase, d.Reason = storagev1alpha1.Moving, storagev1alpha1.ReasonWaitingForDetach
	d.Message = "waiting for " + h + " to let go of the volume"
	if d.Class == storagev1alpha1.Owned && !t.UnreachableSince.IsZero() {
		// An owner that does not answer cannot let go: it is asked once it answers again,
		// or released once fenced. Asking now would cost two writes per volume of a lost
		// member, on the way of its failover.
		recheckWhenLost(o, d, t)
		d.Message = fmt.Sprintf("waiting for %s, unreachable since %s, to answer and let go of the volume",
			h, t.UnreachableSince.UTC().Format(time.RFC3339))
		return
	}
	leave(o, d, h)
}

// stillFenced are the targets of the record's FencedOff whose Fence in the domain still
// holds. A target whose Fence is gone returned and removed its copies first; one whose
// SyncTarget is gone holds nothing Custody knows of.
func stillFenced(o Observation, domain string) []string {
	var out []string
	for _, k := range o.Record.FencedOff {
		if t, ok := o.Targets[k]; ok && t.Fences[domain] != fencing.Unfenced {
			out = append(out, k)
		}
	}
	return out
}

// ownerLost: the owner h stopped answering long ago, so it cannot acknowledge the detach.
// The volume moves only once a Fence cut h off the storage; coordination then acknowledges
// the detach in h's place. Until then it waits, as it would for the acknowledgement.
func ownerLost(o Observation, d *Decision, h string, t Target) {
	d.Phase = storagev1alpha1.Moving
	fence := storagev1alpha1.FenceName(t.Name, d.Domain)
	switch t.Fences[d.Domain] {
	case fencing.Fenced:
		d.Reason, d.Message = storagev1alpha1.ReasonOwnerFenced, h+" is fenced off storage domain "+d.Domain+"; the volume leaves it"
		if !slices.Contains(d.FencedOff, h) {
			d.FencedOff = append(d.FencedOff, h)
		}
		d.Actions = append(d.Actions, Action{Kind: ReleaseFenced, Target: h})
		return
	case fencing.Failed:
		d.Reason = storagev1alpha1.ReasonFenceFailed
		d.Message = fmt.Sprintf("Fence %s failed and is retried (kubectl custody describe fence %s); the volume stays until it succeeds or %s comes back", fence, fence, h)
		return
	case fencing.Unfenced:
		if !t.CanFence {
			d.Reason = storagev1alpha1.ReasonOwnerLostNoFencing
			d.Message = fmt.Sprintf("%s has been unreachable since %s and has no spec.fencing; once its member is powered off, run kubectl custody fence %s --powered-off, or bring it back",
				h, t.UnreachableSince.UTC().Format(time.RFC3339), t.Name)
			return
		}
		if t.FencingUnverified != "" {
			d.Reason = storagev1alpha1.ReasonFencingUnverified
			d.Message = fmt.Sprintf("%s has been unreachable since %s, and its node CIDRs do not match the clients its storage reports: %s; no Fence is asked for until spec.fencing is corrected, or kubectl custody fence %s --powered-off fences it by hand",
				h, t.UnreachableSince.UTC().Format(time.RFC3339), t.FencingUnverified, t.Name)
			return
		}
		if lost, engaged := massFailure(o); engaged {
			d.Reason = storagev1alpha1.ReasonMassFailure
			d.Message = fmt.Sprintf("%s has been unreachable since %s, as are %d of the hub's %d targets at once, more than the brake allows: no Fence is asked for, as a split of the hub's network looks the same; kubectl custody fence %s --powered-off fences it by hand",
				h, t.UnreachableSince.UTC().Format(time.RFC3339), lost, len(o.Targets), t.Name)
			d.Recheck = BrakeRecheck
			return
		}
		d.Actions = append(d.Actions, Action{Kind: RequestFence, Target: h})
	}
	d.Reason = storagev1alpha1.ReasonWaitingForFence
	d.Message = fmt.Sprintf("%s has been unreachable since %s; the volume moves once Fence %s cuts it off storage domain %s, or %s comes back",
		h, t.UnreachableSince.UTC().Format(time.RFC3339), fence, d.Domain, h)
}

// BrakeRecheck is how often a volume held back by the brake is decided again: the targets
// that come back end the mass failure, and no event of the volume's own says so.
const BrakeRecheck = 30 * time.Second

// massFailure counts the hub's Unreachable targets, and tells whether they engage the brake.
func massFailure(o Observation) (unreachable int, engaged bool) {
	for _, t := range o.Targets {
		if !t.Ready && !t.UnreachableSince.IsZero() {
			unreachable++
		}
	}
	return unreachable, o.Brake.Engaged(unreachable, len(o.Targets))
}

// handOver gives the volume that the fenced owner h is released from, in the same writes, to
// the next owner. The Fence, confirmed before the writes, keeps h off the storage, and no
// version of the claim or of the PV names both: a crash between the claim's write and the
// PV's leaves h on one of them, which the Fence releases again.
func handOver(o Observation, d *Decision, h string) {
	next, _, _ := nextOwner(o, d, h)
	if next == "" {
		return
	}
	d.Phase, d.Owner = storagev1alpha1.Bound, next
	d.Reason, d.Message = storagev1alpha1.ReasonMoved, fmt.Sprintf("moved to %s from %s, fenced off storage domain %s", next, h, d.Domain)
	syncOn(o, d, next)
}

// nextOwner picks the target that takes the volume after from: the first target of the
// namespace, other than from, that reaches the domain and whose class is compatible with the
// previous owner's.
func nextOwner(o Observation, d *Decision, from string) (string, string, string) {
	reason, msg := storagev1alpha1.ReasonNoTarget, "no target of the claim's namespace can take the volume"
	prev := classOf(o, o.Record.Owner)
	for _, k := range placedKeys(o.Claim.On) {
		t := o.Targets[k]
		switch {
		case k == from:
		case d.Class == storagev1alpha1.Internal && k != o.Record.Owner:
			reason, msg = storagev1alpha1.ReasonInternalVolumeCannotMove, "the volume lives inside "+o.Record.Owner+" and moves only by copying"
		case !reaches(t, d.Domain):
			reason, msg = storagev1alpha1.ReasonDomainUnreachable, fmt.Sprintf("target %s does not reach storage domain %s", k, d.Domain)
		case t.Class == nil:
			reason, msg = storagev1alpha1.ReasonStorageClassMissing, "target "+k+" has no StorageClass of the claim"
		default:
			if ok, why := compatible(o, prev, t.Class); !ok {
				return "", storagev1alpha1.ReasonStorageClassMismatch, fmt.Sprintf("refused to move to %s: %s", k, why)
			}
			return k, "", ""
		}
	}
	return "", reason, msg
}

func compatible(o Observation, from, to *workloadv1alpha1.StorageClassInfo) (bool, string) {
	if o.Compatible == nil || from == nil {
		return true, ""
	}
	return o.Compatible(from, to)
}

// deleting: the claim was deleted. Every target but one owner leaves first; then the owner
// takes the hub PV's own reclaim policy and lets the claim go, which releases the storage
// (or keeps it, for Retain); then the PV leaves the owner, and the hub PV goes, or, when the
// storage was kept, stays Released.
func deleting(o Observation, d *Decision) {
	d.Phase = storagev1alpha1.Deleting
	held := holders(o)
	// A holder fenced off the volume cannot let go of it: coordination acknowledges in its
	// place, as in a move away from it, before anything else. It keeps its copy, and the
	// storage is not released under it, until it returns.
	if fenced := slices.DeleteFunc(stillFenced(o, d.Domain), func(k string) bool { return !slices.Contains(held, k) }); len(fenced) > 0 {
		d.Reason, d.Message = storagev1alpha1.ReasonOwnerFenced, fmt.Sprintf("%v, fenced off storage domain %s, cannot let go of the volume; coordination does in its place", fenced, d.Domain)
		for _, k := range fenced {
			d.Actions = append(d.Actions, Action{Kind: ReleaseFenced, Target: k})
		}
		return
	}
	owner := o.Record.Owner
	if !slices.Contains(held, owner) {
		owner = ""
		if len(held) > 0 {
			owner = held[0]
		}
	}
	d.Owner = owner
	if others := slices.DeleteFunc(slices.Clone(held), func(k string) bool { return k == owner }); len(others) > 0 {
		d.Reason, d.Message = storagev1alpha1.ReasonWaitingForSharers, fmt.Sprintf("waiting for %v to let go before %s releases the volume", others, owner)
		for _, k := range others {
			leave(o, d, k)
		}
		return
	}
	switch p, ok := o.Claim.On[owner]; {
	case ok && p.Synced():
		ownerLetsGo(o, d, owner, p)
	case owner != "":
		d.Reason, d.Message = storagev1alpha1.ReasonReleasing, "waiting for the volume to leave "+owner
		leave(o, d, owner)
	default:
		releasedByAll(o, d)
	}
}

// ownerLetsGo has the owner, alone to hold the deleted claim, let it go: with the release
// policy once its copies can release the storage, after every fenced member came back.
func ownerLetsGo(o Observation, d *Decision, owner string, p Presence) {
	if len(d.FencedOff) > 0 {
		// A fenced member still has its copy attached: the storage is not released under
		// it. The owner keeps the claim, held, until the member returned and let go.
		d.Reason = storagev1alpha1.ReasonWaitingForFencedTarget
		d.Message = fmt.Sprintf("waiting for %v, fenced off storage domain %s, to come back and remove its copy before %s releases the volume",
			d.FencedOff, d.Domain, owner)
		return
	}
	d.Reason, d.Message = storagev1alpha1.ReasonReleasing, owner+" lets the claim go"
	var pv Presence
	if o.Volume != nil {
		pv = o.Volume.On[owner]
	}
	if p.Held && p.Downstream && !p.Leaving && pv.State == workloadv1alpha1.ResourceStateSync && !pv.Downstream && !pv.Leaving {
		// The volume was just bound: the owner's syncer takes up the PV it provisioned
		// in a moment, and can then release the storage. Let go now, it would keep it.
		d.Message = fmt.Sprintf("waiting for %s to take up the volume before it lets the claim go", owner)
		return
	}
	// Only an owner whose copies of the claim and the PV exist can release the storage:
	// the PV its syncer made, or the one its member provisioned, still upsynced. Any
	// other keeps it, and so does the hub PV below. So does an owner already leaving (a
	// move under way): its syncer may be deleting its copies with Retain right now, and
	// a release policy set now would make the storage count as released when it is not.
	// Once the owner was let go, its syncer applies the policy it saw then: the policy
	// does not change any more.
	policy := o.Claim.ReleasePolicy
	if p.Held {
		policy = releasePolicy(o, owner)
	}
	if policy != "" && p.Downstream && !p.Leaving && (o.Volume == nil || pv.Downstream || pv.State == workloadv1alpha1.ResourceStateUpsync) {
		d.Reclaim.Current = policy
		d.Message = fmt.Sprintf("%s lets the claim go with reclaim policy %s", owner, policy)
		if o.Claim.ReleasePolicy != policy {
			d.Actions = append(d.Actions, Action{Kind: SetReleasePolicy, Policy: policy})
		}
	}
	if p.Held {
		d.Actions = append(d.Actions, Action{Kind: Unhold, Target: owner})
	}
}

// releasedByAll ends the deletion once no target holds the volume: the hub PV is kept, or
// deleted, and the claim finished.
func releasedByAll(o Observation, d *Decision) {
	// The record keeps naming the target that held the volume last, which a kept hub PV
	// tells an admin.
	d.Owner = o.Record.Owner
	d.Reason, d.Message = storagev1alpha1.ReasonReleased, "no target holds the volume"
	if o.Record.Phase != storagev1alpha1.Deleting && o.Record.Phase != storagev1alpha1.Released {
		return // record Deleting before anything ends
	}
	// A kept hub PV that an admin deletes goes by itself: it has no finalizer left.
	kept := o.Claim.ReleasePolicy == "" || o.Claim.ReleasePolicy == corev1.PersistentVolumeReclaimRetain
	if o.Volume != nil && kept && (o.Volume.Released || !o.Volume.Deleting) {
		keepVolume(o, d)
		return
	}
	if o.Volume != nil {
		// Again while it is being deleted: deleting also lets go of the hub's protection.
		d.Actions = append(d.Actions, Action{Kind: DeleteVolume})
		return
	}
	d.Phase = storagev1alpha1.Released
	d.Actions = append(d.Actions, Action{Kind: Finish})
}

// keepVolume: the storage was kept, by the owner's reclaim policy Retain or because the claim
// went while no target had a copy of it to release the storage through. The hub PV stays,
// Released, as a Retain PV does in a cluster, and says where the storage is; the claim
// finishes once it is.
func keepVolume(o Observation, d *Decision) {
	d.Phase, d.Reason = storagev1alpha1.Released, storagev1alpha1.ReasonRetained
	d.Message = fmt.Sprintf("%s let the claim go with reclaim policy Retain; PV %s keeps the storage", d.Owner, o.Volume.Name)
	if o.Claim.ReleasePolicy == "" {
		d.Reason = storagev1alpha1.ReasonRetainedWithoutOwner
		d.Message = "the claim was deleted while no target had a copy of it to release the storage through; PV " + o.Volume.Name + " keeps the storage"
	}
	if !o.Volume.Released {
		d.Actions = append(d.Actions, Action{Kind: RetainVolume, Target: d.Owner})
		return
	}
	d.Actions = append(d.Actions, Action{Kind: Finish})
}

// releasePolicy is the policy the owner applies when the claim leaves it: the hub PV's own,
// or before there is a hub PV, the class's.
func releasePolicy(o Observation, owner string) corev1.PersistentVolumeReclaimPolicy {
	policy := corev1.PersistentVolumeReclaimDelete
	if c := classOf(o, owner); c != nil && c.ReclaimPolicy != "" {
		policy = c.ReclaimPolicy
	}
	if o.Volume != nil && o.Volume.ReclaimPolicy != "" {
		policy = o.Volume.ReclaimPolicy
	}
	return policy
}

// syncOn gives the volume to target k: PV first, then the claim, held there.
func syncOn(o Observation, d *Decision, k string) {
	if p, ok := o.Volume.On[k]; !ok || p.State != workloadv1alpha1.ResourceStateSync || p.Leaving {
		d.Actions = append(d.Actions, Action{Kind: SyncVolume, Target: k})
	}
	hold(o, d, k)
	if p := o.Claim.On[k]; p.State != workloadv1alpha1.ResourceStateSync {
		d.Actions = append(d.Actions, Action{Kind: SyncClaim, Target: k})
	}
}

// leave lets the claim go from k and requests the PV's removal there.
func leave(o Observation, d *Decision, k string) {
	if o.Claim.On[k].Held {
		d.Actions = append(d.Actions, Action{Kind: Unhold, Target: k})
	}
	if o.Volume != nil {
		if p, ok := o.Volume.On[k]; ok && !p.Leaving && !o.Volume.Deleting {
			d.Actions = append(d.Actions, Action{Kind: RemoveVolume, Target: k})
		}
	}
}

func hold(o Observation, d *Decision, k string) {
	if !o.Claim.On[k].Held {
		d.Actions = append(d.Actions, Action{Kind: Hold, Target: k})
	}
}

// holders are the targets that have the volume: the claim synced there, or the PV labelled
// for it in any state.
func holders(o Observation) []string {
	set := map[string]bool{}
	for k, p := range o.Claim.On {
		if p.Synced() {
			set[k] = true
		}
	}
	if o.Volume != nil {
		for k := range o.Volume.On {
			set[k] = true
		}
	}
	return sortedKeys(set)
}

// placedKeys are the targets the claim is placed on and not leaving.
func placedKeys(on map[string]Presence) []string {
	var out []string
	for _, k := range sortedKeys(on) {
		if !on[k].Leaving {
			out = append(out, k)
		}
	}
	return out
}

func syncedKeys(on map[string]Presence) []string {
	var out []string
	for _, k := range sortedKeys(on) {
		if on[k].Synced() {
			out = append(out, k)
		}
	}
	return out
}

// reaches tells whether the target reaches the storage domain; an internal volume (no
// domain) is reached by the target whose class provisions it.
func reaches(t Target, domain string) bool {
	return domain == "" || slices.Contains(t.Domains, domain)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
