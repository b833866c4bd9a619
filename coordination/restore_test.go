package coordination

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// The replica of the restores below: snapshot snap-1 in target c's member, of domain e,
// which targets a and b (domain d) do not reach.
var replica = storagev1alpha1.Replica{Target: "c", Snapshot: "snap-1", Time: metav1.NewTime(time.Date(2025, 12, 31, 23, 55, 0, 0, time.UTC))}

// restoreObs is obs with target c in domain e and the claim asking to be restored from
// snapshot (snap-1, or "" for none); the volume, when there is one, has handle.
func restoreObs(snapshot string, claim, pv map[string]Presence, handle string, rec Record) Observation {
	o := obs(rwo, claim, pv, rec)
	c := o.Targets["c"]
	c.Domains, c.Class = []string{"e"}, class("e", "gold")
	o.Targets["c"] = c
	o.Claim.VolumeName = "pv"
	o.Claim.Restore = &Restore{Target: "c", Snapshot: snapshot}
	if o.Volume != nil {
		o.Volume.Driver, o.Volume.Handle = "csi.example", handle
	}
	if rec.Replica == nil {
		o.Record.Replica = &replica
	}
	return o
}

// setAsideRecord is the record of a restore from snap-1 that set aside volume h-old of a.
func setAsideRecord(phase storagev1alpha1.VolumePhase, owner string) Record {
	return Record{Owner: owner, Phase: phase, OriginalReclaim: del, Replica: &replica, SetAside: &storagev1alpha1.SetAsideVolume{
		Driver: "csi.example", VolumeHandle: "h-old", Domain: "d", Target: "a", For: replica}}
}

func restoreCases() []decideCase {
	bound := Record{Owner: "a", Phase: storagev1alpha1.Bound, OriginalReclaim: del}
	moving := Record{Owner: "a", Phase: storagev1alpha1.Moving, OriginalReclaim: del}
	lostA := func(o Observation) Observation {
		t := o.Targets["a"]
		t.Ready, t.UnreachableSince = false, o.Now.Add(-time.Hour)
		o.Targets["a"] = t
		return o
	}
	return []decideCase{
		{name: "restore: the old owner that answers lets go, as in a move",
			o:         restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", bound),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "restore: an old owner that does not answer is dropped, the replica standing in for it, and the volume set aside in the same step",
			o:         lostA(restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", moving)),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(DropTarget, "a"), act(DeleteVolume, "")}},
		{name: "restore: with one of two holders answering, the lost one is dropped and the volume waits for the other",
			o:         lostA(restoreObs("snap-1", map[string]Presence{"a": departing, "b": departing, "c": placed}, map[string]Presence{"a": pvSync, "b": pvSync}, "h-old", moving)),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(DropTarget, "a"), act(Unhold, "b"), act(RemoveVolume, "b")}},
		{name: "restore: an old owner that stopped answering a moment ago is dropped too, not waited for until its fence delay: the switch judged its Location lost",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", moving)
				t := o.Targets["a"]
				t.Ready, t.UnreachableSince = false, o.Now.Add(-time.Second)
				o.Targets["a"] = t
				return o
			}(),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(DropTarget, "a"), act(DeleteVolume, "")}},
		{name: "restore: an old owner that is not Ready but answers is asked, not dropped",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", moving)
				t := o.Targets["a"]
				t.Ready = false
				o.Targets["a"] = t
				return o
			}(),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "restore: with no holder left, the volume is set aside and its hub PV deleted",
			o:         restoreObs("snap-1", map[string]Presence{"c": placed}, map[string]Presence{}, "h-old", moving),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(DeleteVolume, "")}},
		{name: "restore: the set-aside volume's hub PV, still going, is deleted again",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"c": placed}, map[string]Presence{}, "h-old", setAsideRecord(storagev1alpha1.Restoring, "a"))
				o.Volume.Deleting = true
				return o
			}(),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(DeleteVolume, "")}},
		{name: "restore: the replica's target provisions the claim from the replica",
			o:         restoreObs("snap-1", map[string]Presence{"c": placed}, nil, "", setAsideRecord(storagev1alpha1.Restoring, "a")),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "c", wantReason: storagev1alpha1.ReasonRestoring,
			wantActions: []Action{act(Hold, "c"), act(SyncClaim, "c")}},
		{name: "restore: a claim never seen before is provisioned from the replica",
			o:         restoreObs("snap-1", map[string]Presence{"c": placed}, nil, "", Record{}),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "c", wantReason: storagev1alpha1.ReasonRestoring,
			wantActions: []Action{act(Hold, "c"), act(SyncClaim, "c")}},
		{name: "restore: a claim is provisioned from a replica that another namespace's replication keeps, named as <namespace>/<snapshot>",
			o:         restoreObs("shop/snap-1", map[string]Presence{"c": placed}, nil, "", Record{}),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "c", wantReason: storagev1alpha1.ReasonRestoring,
			wantActions: []Action{act(Hold, "c"), act(SyncClaim, "c")}},
		{name: "restore: a claim being provisioned where it ran lets go there first",
			o:         restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, nil, "", Record{Owner: "a", Phase: storagev1alpha1.Provisioning}),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(Unhold, "a")}},
		{name: "restore: a volume just provisioned where it ran is set aside",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvUp}, "h-old", Record{Owner: "a", Phase: storagev1alpha1.Upsyncing})
				o.Volume.BoundToClaim = false
				return o
			}(),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "restore: waits for the namespace on the replica's target",
			o:         restoreObs("snap-1", map[string]Presence{"b": placed}, nil, "", setAsideRecord(storagev1alpha1.Pending, "a")),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForPlacement},
		{name: "restore: a target the claim is synced to lets go before the replica's target provisions",
			o:         restoreObs("snap-1", map[string]Presence{"b": departing, "c": placed}, nil, "", setAsideRecord(storagev1alpha1.Restoring, "a")),
			wantPhase: storagev1alpha1.Restoring, wantOwner: "a", wantReason: storagev1alpha1.ReasonSettingAside,
			wantActions: []Action{act(Unhold, "b")}},
		{name: "restore: the restored volume came up and is bound",
			o:         restoreObs("snap-1", map[string]Presence{"c": synced}, map[string]Presence{"c": pvUp}, "h-new", setAsideRecord(storagev1alpha1.Restoring, "c")),
			wantPhase: storagev1alpha1.Upsyncing, wantOwner: "c", wantActions: []Action{act(SyncVolume, "c")}},
		{name: "restore: a claim deleted while it is restored is deleted",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"c": synced}, nil, "", setAsideRecord(storagev1alpha1.Restoring, "c"))
				o.Claim.Deleting = true
				return o
			}(),
			wantPhase: storagev1alpha1.Deleting, wantOwner: "c"},
		{name: "restore: no replica, the claim waits and is not provisioned empty",
			o:         restoreObs("", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", bound),
			wantPhase: storagev1alpha1.Pending, wantOwner: "a", wantReason: storagev1alpha1.ReasonNoReplica, wantActions: []Action{}},
		{name: "restore: a claim not protected by its pair waits, and says so",
			o: func() Observation {
				o := restoreObs("", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", bound)
				o.Claim.Unprotected = true
				return o
			}(),
			wantPhase: storagev1alpha1.Pending, wantOwner: "a", wantReason: storagev1alpha1.ReasonNotProtected, wantActions: []Action{}},
		{name: "restore: a replica on a target that is gone is none",
			o: func() Observation {
				o := restoreObs("snap-1", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", bound)
				delete(o.Targets, "c")
				return o
			}(),
			wantPhase: storagev1alpha1.Pending, wantOwner: "a", wantReason: storagev1alpha1.ReasonNoReplica, wantActions: []Action{}},
		{name: "restore: no replica for a volume on its way, the claim waits",
			o:         lostA(restoreObs("", map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, "h-old", moving)),
			wantPhase: storagev1alpha1.Pending, wantOwner: "a", wantReason: storagev1alpha1.ReasonNoReplica, wantActions: []Action{}},
	}
}

func TestRestore(t *testing.T) {
	for _, tc := range restoreCases() {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.o)
			checkDecision(t, tc, d)
			if !tc.o.Claim.Deleting && tc.wantPhase != storagev1alpha1.Pending && d.Domain != "e" {
				t.Errorf("domain %q, want the replica's e", d.Domain)
			}
		})
	}
}

// TestRestoreRecords: the decision that sets the volume aside records it, with the replica
// it is restored from; the one that finds the restored volume in use records the restore,
// which then ends.
func TestRestoreRecords(t *testing.T) {
	o := restoreObs("snap-1", map[string]Presence{"c": placed}, map[string]Presence{}, "h-old", Record{Owner: "a", Phase: storagev1alpha1.Moving})
	o.Volume.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	d := Decide(o)
	want := storagev1alpha1.SetAsideVolume{Driver: "csi.example", VolumeHandle: "h-old", Domain: "d", Target: "a", For: replica, Time: metav1.NewTime(o.Now),
		ReclaimPolicy: corev1.PersistentVolumeReclaimRetain}
	if d.SetAside == nil || *d.SetAside != want {
		t.Fatalf("set aside %+v, want %+v", d.SetAside, want)
	}
	// A policy changed before the hub PV went is recorded: the PV's deletion is refused
	// until the decision saw it.
	o.Record.SetAside, o.Volume.ReclaimPolicy = d.SetAside, del
	if d := Decide(o); d.SetAside == nil || d.SetAside.ReclaimPolicy != del || d.SetAside.Time != want.Time {
		t.Fatalf("set aside again %+v, want the policy Delete and the rest kept", d.SetAside)
	}

	inUse := restoreObs("snap-1", map[string]Presence{"c": synced}, map[string]Presence{"c": pvSync}, "h-new", setAsideRecord(storagev1alpha1.Upsyncing, "c"))
	d = Decide(inUse)
	if d.Phase != storagev1alpha1.Bound || d.RestoredFrom == nil || *d.RestoredFrom != replica {
		t.Fatalf("%s (%s), restored from %+v, want Bound from %+v", d.Phase, d.Reason, d.RestoredFrom, replica)
	}
	if *d.SetAside != *inUse.Record.SetAside {
		t.Errorf("set aside %+v, want it kept", d.SetAside)
	}
	inUse.Record.RestoredFrom = d.RestoredFrom
	if restoring(inUse, "e") {
		t.Error("the restore goes on after it was recorded")
	}

	// A volume kept with Retain is restored into a volume kept so, bound with Retain in one write.
	kept := restoreObs("snap-1", map[string]Presence{"c": synced}, map[string]Presence{"c": pvUp}, "h-new", setAsideRecord(storagev1alpha1.Restoring, "c"))
	kept.Volume.BoundToClaim, kept.Volume.ReclaimPolicy = false, del
	kept.Record.SetAside.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	d = Decide(kept)
	if i := slices.IndexFunc(d.Actions, func(a Action) bool { return a.Kind == BindClaim }); i < 0 || d.Actions[i].Policy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("the restored volume of a kept one is bound with %v, want BindClaim with Retain", d.Actions)
	}
	// The restore recorded and the volume bound, a controller restarted before the policy
	// was applied applies it, in the binding that goes on until the volume is in Sync.
	kept.Record.RestoredFrom, kept.Volume.BoundToClaim = &replica, true
	d = Decide(kept)
	if i := slices.IndexFunc(d.Actions, func(a Action) bool { return a.Kind == BindClaim }); i < 0 || d.Actions[i].Policy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("the restored volume of a kept one, bound, is bound again with %v, want BindClaim with Retain", d.Actions)
	}
	kept.Volume.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	if d := Decide(kept); slices.ContainsFunc(d.Actions, func(a Action) bool { return a.Kind == BindClaim }) {
		t.Errorf("the restored volume bound with Retain is bound again: %v", d.Actions)
	}
	kept.Volume.ReclaimPolicy, kept.Record.SetAside.ReclaimPolicy = del, del
	if d := Decide(kept); slices.ContainsFunc(d.Actions, func(a Action) bool { return a.Policy != "" }) {
		t.Errorf("the restored volume of one with reclaim policy Delete is bound with %v, want no policy", d.Actions)
	}

	shared := restoreObs("snap-1", map[string]Presence{"c": synced}, map[string]Presence{"c": pvSync}, "h-new", setAsideRecord(storagev1alpha1.Upsyncing, "c"))
	shared.Claim.AccessModes = rwx
	if d := Decide(shared); d.Phase != storagev1alpha1.Bound || d.Reason != storagev1alpha1.ReasonInUse || d.RestoredFrom == nil {
		t.Errorf("a restored shared volume is %s (%s), restored from %v", d.Phase, d.Reason, d.RestoredFrom)
	}
}

// TestNoRestoreForAVolumeThatMoves: a volume the replica's target reaches moves there as any
// volume does, with its data; it is not replaced by an older replica.
func TestNoRestoreForAVolumeThatMoves(t *testing.T) {
	o := obs(rwo, map[string]Presence{"a": departing, "c": placed}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Bound})
	o.Claim.Restore = &Restore{Target: "c", Snapshot: "snap-1"}
	d := Decide(o)
	if d.Phase != storagev1alpha1.Moving || !slices.Equal(d.Actions, []Action{act(Unhold, "a"), act(RemoveVolume, "a")}) {
		t.Fatalf("%s (%s) with %v, want a move", d.Phase, d.Reason, d.Actions)
	}
}
