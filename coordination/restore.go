package coordination

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// restoring tells whether the claim is being restored from a replica: one is asked for that
// the volume was not restored from yet, and either the restore began (it set the volume it
// replaces aside, or the record says Restoring), or the claim has no volume, or its volume
// cannot simply move to the replica's target, which does not reach the volume's storage
// domain. A volume that can move there moves as any other, and nothing is lost.
func restoring(o Observation, domain string) bool {
	r := o.Claim.Restore
	switch {
	case r == nil || o.Claim.Deleting || r.Is(o.Record.RestoredFrom):
		return false
	case begun(o) || o.Volume == nil || o.Record.Phase == storagev1alpha1.Restoring:
		return true
	}
	t, known := o.Targets[r.Target]
	return !known || !reaches(t, domain)
}

// begun: the restore the claim asks for already set a volume aside.
func begun(o Observation) bool {
	return o.Record.SetAside != nil && o.Claim.Restore.Is(&o.Record.SetAside.For)
}

// restore takes one step of restoring the claim from its replica. The volume it replaces is
// let go of: its holders that answer let go as in a move, those that do not are dropped, as
// the replica stands in for them. It is recorded as set aside (its storage is kept, never
// released) and its hub PV is deleted, so that the restored volume can take the name the
// claim is bound to. Then the claim goes to the replica's target, whose member provisions the
// new volume from the replica; once it came up, the restore is recorded, and the volume is
// bound and used as any volume is.
func restore(o Observation, d *Decision) {
	r := *o.Claim.Restore
	old := d.Domain
	if c := classOf(o, r.Target); c != nil {
		d.Class, d.Domain = kind(o, c)
	}
	_, known := o.Targets[r.Target]
	if r.Snapshot == "" || !known {
		d.Phase, d.Reason = storagev1alpha1.Pending, storagev1alpha1.ReasonNoReplica
		why := "the switch of Locations found no replica of the volume"
		switch {
		case r.Snapshot != "":
			why = fmt.Sprintf("replica %s of the volume is on %s, which is no longer a target", r.Snapshot, r.Target)
		case o.Claim.Unprotected:
			d.Reason = storagev1alpha1.ReasonNotProtected
			why = "the switch of Locations left the claim, labelled " + storagev1alpha1.ProtectLabel + "=false: its pair does not replicate it"
		}
		d.Message = fmt.Sprintf("%s, and it is not restored empty: its data stays on %s, in storage domain %s; switch back once that is possible, or delete the claim to start empty",
			why, o.Record.Owner, old)
		return
	}
	d.Phase = storagev1alpha1.Restoring
	switch {
	case o.Volume != nil && !restored(o):
		setAside(o, d, r, old)
	case o.Volume == nil:
		provisionReplica(o, d, r, old)
	default:
		// The restored volume came up: the restore is done. Bind it, then use it as any other.
		switch {
		case upsyncing(o.Volume) != "":
			bind(o, d)
		case d.Class == storagev1alpha1.Shared:
			share(o, d)
		default:
			own(o, d)
		}
		d.RestoredFrom = &storagev1alpha1.Replica{Target: r.Target, Snapshot: r.Snapshot}
		if r.Is(o.Record.Replica) {
			d.RestoredFrom.Time = o.Record.Replica.Time
		}
	}
}

// restored: the claim's volume is the restored one, not one to set aside: the replica's
// target has it (the volume it replaces could never reach that target), or it is another
// than the one the restore set aside.
func restored(o Observation) bool {
	if _, ok := o.Volume.On[o.Claim.Restore.Target]; ok {
		return true
	}
	return begun(o) && replaces(o.Volume, o.Record.SetAside)
}

// replaces: the volume is another than the one set aside.
func replaces(v *Volume, a *storagev1alpha1.SetAsideVolume) bool {
	return v.Handle != a.VolumeHandle || v.Driver != a.Driver
}

// keptPolicy is Retain for the volume restored in place of one set aside whose hub PV said
// Retain: the claim's storage stays kept. It is applied while the restored volume is bound.
func keptPolicy(o Observation) corev1.PersistentVolumeReclaimPolicy {
	if a := o.Record.SetAside; a != nil && a.ReclaimPolicy == corev1.PersistentVolumeReclaimRetain && replaces(o.Volume, a) {
		return a.ReclaimPolicy
	}
	return ""
}

// setAside lets go of the volume the replica replaces, then records it set aside and deletes
// its hub PV: in the same step when every holder is dropped, as lost or fenced holders are.
func setAside(o Observation, d *Decision, r Restore, domain string) {
	d.Reason = storagev1alpha1.ReasonSettingAside
	if held := holders(o); len(held) > 0 {
		letGo(o, d, held, domain)
		if !drops(d, held) {
			d.Message = fmt.Sprintf("replica %s on %s replaces the volume; waiting for %v to let go of it (its storage is kept)", r.Snapshot, r.Target, held)
			return
		}
	}
	a := storagev1alpha1.SetAsideVolume{Driver: o.Volume.Driver, VolumeHandle: o.Volume.Handle, Domain: domain,
		Target: o.Record.Owner, For: storagev1alpha1.Replica{Target: r.Target, Snapshot: r.Snapshot}, Time: metav1.NewTime(o.Now)}
	if begun(o) {
		a = *o.Record.SetAside
	} else if r.Is(o.Record.Replica) {
		a.For.Time = o.Record.Replica.Time
	}
	// The policy is the hub PV's until it goes: its deletion is refused if it changed since.
	a.ReclaimPolicy = o.Volume.ReclaimPolicy
	d.SetAside = &a
	d.Message = fmt.Sprintf("volume %s is set aside, its storage kept; its hub PV goes so that the volume restored from replica %s on %s takes its name",
		d.SetAside.VolumeHandle, r.Snapshot, r.Target)
	d.Actions = append(d.Actions, Action{Kind: DeleteVolume})
}

// drops tells whether the decision drops every one of the targets.
func drops(d *Decision, keys []string) bool {
	return !slices.ContainsFunc(keys, func(k string) bool {
		return !slices.Contains(d.Actions, Action{Kind: DropTarget, Target: k})
	})
}

// provisionReplica gives the claim, which has no volume, to the replica's target, whose member
// provisions its volume from the replica; any other target the claim is synced to lets go of
// it first, as it would provision a volume of its own.
func provisionReplica(o Observation, d *Decision, r Restore, domain string) {
	if others := slices.DeleteFunc(syncedKeys(o.Claim.On), func(k string) bool { return k == r.Target }); len(others) > 0 {
		letGo(o, d, others, domain)
		d.Reason, d.Message = storagev1alpha1.ReasonSettingAside, fmt.Sprintf("waiting for %v to let go of the claim before %s restores it", others, r.Target)
		return
	}
	p, placed := o.Claim.On[r.Target]
	if !placed || p.Leaving {
		d.Reason = storagev1alpha1.ReasonWaitingForPlacement
		d.Message = fmt.Sprintf("waiting for the claim's namespace to be placed on %s, whose member holds replica %s", r.Target, r.Snapshot)
		return
	}
	d.Owner, d.Reason = r.Target, storagev1alpha1.ReasonRestoring
	d.Message = fmt.Sprintf("%s provisions the volume from replica %s", r.Target, r.Snapshot)
	hold(o, d, r.Target)
	if !p.Synced() {
		d.Actions = append(d.Actions, Action{Kind: SyncClaim, Target: r.Target})
	}
}

// letGo asks the targets to let go of the claim and its volume, as in a move, and drops
// without their acknowledgement those that do not answer (Unreachable) or are fenced off the
// volume's domain: the replica stands in for the volume, which is set aside and never
// released. A restore is asked by a switch of Locations, which a pair makes on its own only
// once its Location did not answer for its failover threshold, or which an admin declared:
// that is the judgement a fence delay stands for in a move, and waiting for the targets'
// fence delays on top would only hold the restore back.
func letGo(o Observation, d *Decision, keys []string, domain string) {
	for _, k := range keys {
		t := o.Targets[k]
		if !t.Ready && (!t.UnreachableSince.IsZero() || t.Fences[domain].Holds()) {
			d.Actions = append(d.Actions, Action{Kind: DropTarget, Target: k})
			continue
		}
		leave(o, d, k)
	}
}
