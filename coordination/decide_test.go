package coordination

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

var (
	rwo = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	rwx = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
)

func class(domain, params string) *workloadv1alpha1.StorageClassInfo {
	return &workloadv1alpha1.StorageClassInfo{Name: "fast", Provisioner: "p", Domain: domain, ReclaimPolicy: del,
		Parameters: map[string]string{"tier": params}}
}

// obs builds an observation over targets a, b and c, all Ready in domain d with class fast.
func obs(modes []corev1.PersistentVolumeAccessMode, claim map[string]Presence, pv map[string]Presence, rec Record) Observation {
	o := Observation{Claim: Claim{AccessModes: modes, On: claim}, Record: rec, Targets: map[string]Target{},
		Now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, k := range []string{"a", "b", "c"} {
		o.Targets[k] = Target{Name: "target-" + k, Ready: true, CanFence: true, FenceDelay: 30 * time.Second, Domains: []string{"d"}, Class: class("d", "gold")}
	}
	if pv != nil {
		o.Claim.VolumeName = "pv"
		o.Volume = &Volume{Name: "pv", BoundToClaim: true, ReclaimPolicy: del, On: pv}
	}
	o.Compatible = func(from, to *workloadv1alpha1.StorageClassInfo) (bool, string) {
		if from.Parameters["tier"] != to.Parameters["tier"] {
			return false, "parameters differ"
		}
		return true, ""
	}
	return o
}

var (
	placed    = Presence{}
	leaving   = Presence{Leaving: true}
	synced    = Presence{State: sync, Held: true, Downstream: true}
	departing = Presence{State: sync, Held: true, Downstream: true, Leaving: true}
	pvSync    = Presence{State: sync, Downstream: true}
	pvUp      = Presence{State: upsync, Downstream: true}
)

func act(kind ActionKind, target string) Action { return Action{Kind: kind, Target: target} }

type decideCase struct {
	name        string
	o           Observation
	wantPhase   storagev1alpha1.VolumePhase
	wantOwner   string
	wantReason  string
	wantActions []Action
	// wantRecheck is when the decision asks to be taken again with time alone; zero: never.
	wantRecheck time.Duration
}

func decideCases() []decideCase {
	withDeleting := func(o Observation) Observation { o.Claim.Deleting = true; return o }
	notReady := func(o Observation, k string) Observation {
		t := o.Targets[k]
		t.Ready = false
		o.Targets[k] = t
		return o
	}
	withClass := func(o Observation, k string, c *workloadv1alpha1.StorageClassInfo) Observation {
		t := o.Targets[k]
		t.Class = c
		o.Targets[k] = t
		return o
	}
	lost := func(o Observation, k string, fence fencing.State) Observation {
		t := o.Targets[k]
		t.Ready, t.UnreachableSince, t.Fences = false, o.Now.Add(-time.Minute), map[string]fencing.State{"d": fence}
		o.Targets[k] = t
		return o
	}
	// unverified says that a's node CIDRs do not match its storage's clients.
	unverified := func(o Observation) Observation {
		t := o.Targets["a"]
		t.FencingUnverified = "the storage reports clients of the member that no node CIDR covers: 10.0.9.1/32 (client a)"
		o.Targets["a"] = t
		return o
	}
	// massLost makes the hub ten targets, of which lost in all are lost (a among them), under
	// the default brake.
	massLost := func(o Observation, lost int) Observation {
		o.Brake = fencing.DefaultBrake
		for i := len(o.Targets); i < 10; i++ {
			t := Target{Name: fmt.Sprintf("stand-in-%d", i), Ready: true, FenceDelay: 30 * time.Second}
			o.Targets[t.Name] = t
		}
		for _, t := range o.Targets {
			if !t.Ready {
				lost--
			}
		}
		for i := 3; lost > 0; i, lost = i+1, lost-1 {
			t := o.Targets[fmt.Sprintf("stand-in-%d", i)]
			t.Ready, t.UnreachableSince = false, o.Now.Add(-time.Minute)
			o.Targets[t.Name] = t
		}
		return o
	}
	bound := func(owner string) Record {
		return Record{Owner: owner, Phase: storagev1alpha1.Bound, OriginalReclaim: del}
	}
	return []decideCase{
		{name: "new claim, namespace not placed → Pending",
			o: obs(rwo, map[string]Presence{}, nil, Record{}), wantPhase: storagev1alpha1.Pending, wantReason: storagev1alpha1.ReasonWaitingForPlacement},
		{name: "new claim placed → Provisioning on the first Ready target",
			o: obs(rwo, map[string]Presence{"a": placed, "b": placed}, nil, Record{}), wantPhase: storagev1alpha1.Provisioning, wantOwner: "a",
			wantActions: []Action{act(Hold, "a"), act(SyncClaim, "a")}},
		{name: "Pending → Provisioning once a target is Ready",
			o: notReady(obs(rwo, map[string]Presence{"a": placed, "b": placed}, nil, Record{Phase: storagev1alpha1.Pending}), "a"), wantPhase: storagev1alpha1.Provisioning, wantOwner: "b",
			wantActions: []Action{act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Pending stays Pending while no target can provision",
			o: notReady(obs(rwo, map[string]Presence{"a": placed}, nil, Record{Phase: storagev1alpha1.Pending}), "a"), wantPhase: storagev1alpha1.Pending, wantReason: storagev1alpha1.ReasonNoProvisioningTarget},
		{name: "Provisioning waits for the PV, holding the claim",
			o: obs(rwo, map[string]Presence{"a": synced}, nil, Record{Owner: "a", Phase: storagev1alpha1.Provisioning}), wantPhase: storagev1alpha1.Provisioning, wantOwner: "a"},
		{name: "Provisioning target left before anything came up: let go",
			o: obs(rwo, map[string]Presence{"a": departing, "b": placed}, nil, Record{Owner: "a", Phase: storagev1alpha1.Provisioning}), wantPhase: storagev1alpha1.Provisioning, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonWaitingForDetach, wantActions: []Action{act(Unhold, "a")}},
		{name: "Provisioning → Pending when the provisioning target went and none can take it",
			o: notReady(obs(rwo, map[string]Presence{"b": placed}, nil, Record{Owner: "a", Phase: storagev1alpha1.Provisioning}), "b"), wantPhase: storagev1alpha1.Pending, wantReason: storagev1alpha1.ReasonNoProvisioningTarget},
		{name: "Provisioning → Upsyncing: bind and switch the PV to Sync",
			o: func() Observation {
				o := obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvUp}, Record{Owner: "a", Phase: storagev1alpha1.Provisioning})
				o.Claim.VolumeName = ""
				return o
			}(), wantPhase: storagev1alpha1.Upsyncing, wantOwner: "a", wantActions: []Action{act(BindClaim, ""), act(SyncVolume, "a")}},
		{name: "Provisioning → Upsyncing: a PV made a moment ago waits for the status its syncer reports next",
			o: func() Observation {
				o := obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvUp}, Record{Owner: "a", Phase: storagev1alpha1.Provisioning})
				o.Claim.VolumeName, o.Volume.Pending = "", true
				return o
			}(), wantPhase: storagev1alpha1.Upsyncing, wantOwner: "a", wantReason: storagev1alpha1.ReasonBinding, wantActions: []Action{}},
		{name: "Provisioning → Upsyncing: a PV whose status was not reported yet is bound once its target stopped answering",
			o: func() Observation {
				o := notReady(obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvUp}, Record{Owner: "a", Phase: storagev1alpha1.Provisioning}), "a")
				o.Claim.VolumeName, o.Volume.Pending = "", true
				return o
			}(), wantPhase: storagev1alpha1.Upsyncing, wantOwner: "a", wantActions: []Action{act(BindClaim, ""), act(SyncVolume, "a")}},
		{name: "Upsyncing → Bound",
			o: obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Upsyncing}), wantPhase: storagev1alpha1.Bound, wantOwner: "a", wantReason: storagev1alpha1.ReasonInUse},
		{name: "Upsyncing → Moving when the namespace left meanwhile",
			o: obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Upsyncing}), wantPhase: storagev1alpha1.Moving, wantOwner: "a",
			wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "Bound → Moving: the old owner is asked to let go, the new one waits",
			o: obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), wantPhase: storagev1alpha1.Moving, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonWaitingForDetach, wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "two holders: the one the namespace left is asked to let go",
			o:         obs(rwo, map[string]Presence{"a": departing, "b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Moving}),
			wantPhase: storagev1alpha1.Moving, wantOwner: "b", wantReason: storagev1alpha1.ReasonMultipleHolders,
			wantActions: []Action{act(Unhold, "a")}},
		{name: "two holders: a copy of the PV on a target the claim is not on is removed",
			o:         obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"a": pvSync, "b": pvSync}, bound("b")),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonMultipleHolders,
			wantActions: []Action{act(RemoveVolume, "a")}},
		{name: "two holders: a lost one the namespace left is fenced, not waited for",
			o:         lost(obs(rwo, map[string]Presence{"a": departing, "b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced),
			wantPhase: storagev1alpha1.Moving, wantOwner: "b", wantReason: storagev1alpha1.ReasonWaitingForFence,
			wantActions: []Action{act(RequestFence, "a")}},
		{name: "two holders: one the namespace left that stopped answering a moment ago is asked, and fenced once it is lost",
			o: func() Observation {
				o := lost(obs(rwo, map[string]Presence{"a": departing, "b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced)
				t := o.Targets["a"]
				t.FenceDelay = 90 * time.Second
				o.Targets["a"] = t
				return o
			}(),
			wantPhase: storagev1alpha1.Moving, wantOwner: "b", wantReason: storagev1alpha1.ReasonMultipleHolders,
			wantActions: []Action{act(Unhold, "a")}, wantRecheck: 30 * time.Second},
		{name: "two placed holders wait: no one can say which copy is in use",
			o:         obs(rwo, map[string]Presence{"a": synced, "b": synced}, map[string]Presence{"a": pvSync}, bound("a")),
			wantPhase: storagev1alpha1.Bound, wantOwner: "a", wantReason: storagev1alpha1.ReasonMultipleHolders},
		{name: "Bound → Moving: a lost owner cannot let go; the volume waits for a Fence of it",
			o: lost(obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), "a", fencing.Fencing), wantPhase: storagev1alpha1.Moving, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonWaitingForFence, wantActions: []Action{}},
		{name: "Bound → Moving: an owner unreachable for less than the fence delay is not asked to let go",
			o: func() Observation {
				o := lost(obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), "a", fencing.Unfenced)
				t := o.Targets["a"]
				t.FenceDelay = 2 * time.Minute
				o.Targets["a"] = t
				return o
			}(), wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForDetach, wantActions: []Action{}, wantRecheck: time.Minute},
		{name: "Moving: an owner unreachable for less than the fence delay is waited for",
			o: func() Observation {
				o := lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Fenced)
				t := o.Targets["a"]
				t.FenceDelay = 2 * time.Minute
				o.Targets["a"] = t
				return o
			}(), wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForDetach, wantActions: []Action{}, wantRecheck: time.Minute},
		{name: "Moving: a failed Fence moves nothing",
			o:         lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Failed),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonFenceFailed, wantActions: []Action{}},
		{name: "Moving: a lost owner with no Fence yet gets one asked for",
			o:         lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForFence, wantActions: []Action{act(RequestFence, "a")}},
		{name: "Moving: a lost owner among more lost targets than the brake allows gets no Fence, and waits",
			o:         massLost(lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced), 6),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonMassFailure, wantActions: []Action{}, wantRecheck: BrakeRecheck},
		{name: "Moving: a lost owner among no more lost targets than the brake allows gets its Fence",
			o:         massLost(lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced), 5),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForFence, wantActions: []Action{act(RequestFence, "a")}},
		{name: "Moving → Bound: under the brake, a Fence an admin asked for still moves the volume",
			o:         massLost(lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Fenced), 6),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonMoved,
			wantActions: []Action{act(ReleaseFenced, "a"), act(SyncVolume, "b"), act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Moving: a lost owner that cannot be network fenced waits for an admin",
			o: func() Observation {
				o := lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced)
				t := o.Targets["a"]
				t.CanFence = false
				o.Targets["a"] = t
				return o
			}(), wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonOwnerLostNoFencing, wantActions: []Action{}},
		{name: "Moving: a lost owner whose node CIDRs do not match its storage's clients gets no Fence, and waits",
			o:         unverified(lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfenced)),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonFencingUnverified, wantActions: []Action{}},
		{name: "Moving → Bound: a lost owner whose node CIDRs are unverified moves on a Fence an admin made",
			o:         unverified(lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Fenced)),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonMoved,
			wantActions: []Action{act(ReleaseFenced, "a"), act(SyncVolume, "b"), act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Moving: a Fence being lifted moves nothing and asks for no other",
			o:         lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Unfencing),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonWaitingForFence, wantActions: []Action{}},
		{name: "Moving → Bound: the lost owner is fenced; coordination acknowledges the detach in its place and hands the volume over",
			o:         lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Fenced),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonMoved,
			wantActions: []Action{act(ReleaseFenced, "a"), act(SyncVolume, "b"), act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Moving: the lost owner is fenced and no target can take the volume; coordination acknowledges the detach in its place",
			o:         lost(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), "a", fencing.Fenced),
			wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonOwnerFenced, wantActions: []Action{act(ReleaseFenced, "a")}},
		{name: "Moving waits while the old owner's PV label is still there",
			o: obs(rwo, map[string]Presence{"b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), wantPhase: storagev1alpha1.Moving, wantOwner: "a"},
		{name: "Moving → Bound after the acknowledgement: PV, hold, then claim",
			o: obs(rwo, map[string]Presence{"b": placed}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), wantPhase: storagev1alpha1.Bound, wantOwner: "b",
			wantReason: storagev1alpha1.ReasonMoved, wantActions: []Action{act(SyncVolume, "b"), act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Bound on the target it moved to: the record stays Moved, and is not written again",
			o:         obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonMoved}),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonMoved},
		{name: "Bound on its owner, not moved there: InUse",
			o:         obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonMoved}),
			wantPhase: storagev1alpha1.Bound, wantOwner: "b", wantReason: storagev1alpha1.ReasonInUse},
		{name: "Moving with nowhere to go",
			o: obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Moving}), wantPhase: storagev1alpha1.Moving, wantReason: storagev1alpha1.ReasonNoTarget, wantOwner: "a"},
		{name: "Bound: a move to a target whose class differs is refused and the owner held",
			o:         withClass(obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), "b", class("d", "bronze")),
			wantPhase: storagev1alpha1.Bound, wantOwner: "a", wantReason: storagev1alpha1.ReasonStorageClassMismatch},
		{name: "Bound: an internal volume never moves",
			o:         withClass(withClass(obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), "a", class("", "gold")), "b", class("", "gold")),
			wantPhase: storagev1alpha1.Bound, wantOwner: "a", wantReason: storagev1alpha1.ReasonInternalVolumeCannotMove},
		{name: "Bound: a target outside the domain cannot take it",
			o: func() Observation {
				o := obs(rwo, map[string]Presence{"b": placed}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Moving})
				o.Targets["b"] = Target{Ready: true, Domains: []string{"other"}, Class: class("d", "gold")}
				return o
			}(), wantPhase: storagev1alpha1.Moving, wantOwner: "a", wantReason: storagev1alpha1.ReasonDomainUnreachable},
		{name: "Bound: a shared volume goes, pre-bound, to every target",
			o: obs(rwx, map[string]Presence{"a": synced, "b": placed}, map[string]Presence{"a": pvSync}, bound("a")), wantPhase: storagev1alpha1.Bound, wantOwner: "a",
			wantActions: []Action{act(SyncVolume, "b"), act(Hold, "b"), act(SyncClaim, "b")}},
		{name: "Bound: a sharer leaves",
			o: obs(rwx, map[string]Presence{"a": synced, "b": departing}, map[string]Presence{"a": pvSync, "b": pvSync}, bound("a")), wantPhase: storagev1alpha1.Bound, wantOwner: "a",
			wantActions: []Action{act(Unhold, "b"), act(RemoveVolume, "b")}},
		{name: "Bound: the last sharer leaves; the owner stays the last one",
			o: obs(rwx, map[string]Presence{"a": departing}, map[string]Presence{"a": pvSync}, bound("a")), wantPhase: storagev1alpha1.Bound, wantOwner: "a",
			wantActions: []Action{act(Unhold, "a"), act(RemoveVolume, "a")}},
		{name: "a never-synced target the claim leaves is dropped",
			o: obs(rwo, map[string]Presence{"a": synced, "b": leaving}, map[string]Presence{"a": pvSync}, bound("a")), wantPhase: storagev1alpha1.Bound, wantOwner: "a",
			wantActions: []Action{act(DropClaim, "b")}},
		{name: "Bound → Deleting: sharers leave first",
			o: withDeleting(obs(rwx, map[string]Presence{"a": synced, "b": synced}, map[string]Presence{"a": pvSync, "b": pvSync}, bound("a"))), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonWaitingForSharers, wantActions: []Action{act(Unhold, "b"), act(RemoveVolume, "b")}},
		{name: "Deleting: the owner lets the claim go with the hub PV's policy",
			o: withDeleting(obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{{Kind: SetReleasePolicy, Policy: del}, act(Unhold, "a")}},
		{name: "Deleting: a hub PV that says Retain is kept on the owner",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Deleting}))
				o.Volume.ReclaimPolicy = retain
				return o
			}(), wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantActions: []Action{{Kind: SetReleasePolicy, Policy: retain}, act(Unhold, "a")}},
		{name: "Deleting: an owner without its copies cannot release; it only lets go",
			o: withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Held: true}}, map[string]Presence{"a": {State: sync}}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantActions: []Action{act(Unhold, "a")}},
		{name: "Deleting: an owner whose syncer has not taken up the PV just bound waits, so that it can release the storage",
			o: withDeleting(obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": {State: sync}}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{}},
		{name: "Deleting: an owner let go without a policy keeps the storage: no policy is set after it",
			o: withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Downstream: true}}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{}},
		{name: "Deleting: an owner let go with a policy keeps it",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Downstream: true}}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Deleting}))
				o.Claim.ReleasePolicy = del
				o.Volume.ReclaimPolicy = retain
				return o
			}(), wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{}},
		{name: "Deleting: an owner whose member provisioned the PV, still upsynced, lets the claim go with the policy",
			o: withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Held: true, Downstream: true}}, map[string]Presence{"a": pvUp}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{{Kind: SetReleasePolicy, Policy: del}, act(Unhold, "a")}},
		{name: "Deleting: an owner deleted while it leaves (a move) keeps the storage: it may be letting go with Retain already",
			o:         withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed}, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})),
			wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{}},
		{name: "Deleting: a target the volume was fenced away from still has its copy; the owner keeps the claim",
			o:         lost(withDeleting(obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Deleting, FencedOff: []string{"a"}})), "a", fencing.Fenced),
			wantPhase: storagev1alpha1.Deleting, wantOwner: "b", wantReason: storagev1alpha1.ReasonWaitingForFencedTarget, wantActions: []Action{}},
		{name: "Deleting: an owner fenced off the volume while it moved away is released in its place; it keeps its copy until it returns",
			o:         lost(withDeleting(obs(rwo, map[string]Presence{"a": {State: sync, Held: true, Downstream: true, Leaving: true}, "b": placed}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Moving, FencedOff: []string{"a"}})), "a", fencing.Fenced),
			wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantReason: storagev1alpha1.ReasonOwnerFenced, wantActions: []Action{act(ReleaseFenced, "a")}},
		{name: "Deleting: the Fence of the target the volume was fenced away from is lifted; the owner releases",
			o:         withDeleting(obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Deleting, FencedOff: []string{"a"}})),
			wantPhase: storagev1alpha1.Deleting, wantOwner: "b", wantReason: storagev1alpha1.ReasonReleasing, wantActions: []Action{{Kind: SetReleasePolicy, Policy: del}, act(Unhold, "b")}},
		{name: "Deleting: the claim left the owner, now the PV",
			o: withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{"a": pvSync}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantActions: []Action{act(RemoveVolume, "a")}},
		{name: "Deleting: nobody holds the released volume, the hub PV goes",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Deleting}))
				o.Claim.ReleasePolicy = del
				return o
			}(), wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantActions: []Action{act(DeleteVolume, "")}},
		{name: "Deleting → Released: the owner let go with Retain; the hub PV stays, Released, naming it",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Deleting}))
				o.Claim.ReleasePolicy, o.Volume.ReclaimPolicy = retain, retain
				return o
			}(), wantPhase: storagev1alpha1.Released, wantOwner: "a", wantReason: storagev1alpha1.ReasonRetained,
			wantActions: []Action{act(RetainVolume, "a")}},
		{name: "Released: the claim finishes once the kept hub PV is Released",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Released}))
				o.Claim.ReleasePolicy, o.Volume.ReclaimPolicy, o.Volume.Released = retain, retain, true
				return o
			}(), wantPhase: storagev1alpha1.Released, wantOwner: "a", wantReason: storagev1alpha1.ReasonRetained,
			wantActions: []Action{act(Finish, "")}},
		{name: "Released: an admin deletes the kept hub PV before the claim finished; nothing is released",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Released}))
				o.Claim.ReleasePolicy, o.Volume.ReclaimPolicy, o.Volume.Released, o.Volume.Deleting = retain, retain, true, true
				return o
			}(), wantPhase: storagev1alpha1.Released, wantOwner: "a", wantActions: []Action{act(Finish, "")}},
		{name: "Deleting: an admin deletes the hub PV before it was kept; it goes, nothing is released",
			o: func() Observation {
				o := withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Deleting}))
				o.Claim.ReleasePolicy, o.Volume.ReclaimPolicy, o.Volume.Deleting = retain, retain, true
				return o
			}(), wantPhase: storagev1alpha1.Deleting, wantOwner: "a", wantActions: []Action{act(DeleteVolume, "")}},
		{name: "Deleting → Released: the hub PV is gone",
			o: withDeleting(obs(rwo, map[string]Presence{}, nil, Record{Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Released, wantActions: []Action{act(Finish, "")}},
		{name: "Deleting → Released keeping the hub PV when no owner could release",
			o: withDeleting(obs(rwo, map[string]Presence{}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Deleting})), wantPhase: storagev1alpha1.Released,
			wantOwner: "a", wantReason: storagev1alpha1.ReasonRetainedWithoutOwner, wantActions: []Action{act(RetainVolume, "a")}},
		{name: "Pending → Deleting",
			o: withDeleting(obs(rwo, map[string]Presence{"a": placed}, nil, Record{Phase: storagev1alpha1.Pending})), wantPhase: storagev1alpha1.Deleting},
		{name: "Provisioning → Deleting: the owner lets go with the class's policy",
			o: withDeleting(obs(rwo, map[string]Presence{"a": synced}, nil, Record{Owner: "a", Phase: storagev1alpha1.Provisioning})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a",
			wantActions: []Action{{Kind: SetReleasePolicy, Policy: del}, act(Unhold, "a")}},
		{name: "Upsyncing → Deleting",
			o: withDeleting(obs(rwo, map[string]Presence{"a": synced}, map[string]Presence{"a": pvUp}, Record{Owner: "a", Phase: storagev1alpha1.Upsyncing})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a"},
		{name: "Moving → Deleting",
			o: withDeleting(obs(rwo, map[string]Presence{"b": placed}, map[string]Presence{"a": {State: sync, Leaving: true}}, Record{Owner: "a", Phase: storagev1alpha1.Moving})), wantPhase: storagev1alpha1.Deleting, wantOwner: "a"},
		{name: "a deleted claim never seen before → Deleting",
			o: withDeleting(obs(rwo, map[string]Presence{}, nil, Record{})), wantPhase: storagev1alpha1.Deleting},
	}
}

func TestDecide(t *testing.T) {
	for _, tc := range decideCases() {
		t.Run(tc.name, func(t *testing.T) { checkDecision(t, tc, Decide(tc.o)) })
	}
}

// checkDecision compares a decision with what the case wants: an allowed transition, the
// phase and owner, and the reason and actions when the case names them.
func checkDecision(t *testing.T, tc decideCase, d Decision) {
	t.Helper()
	if !Allowed(tc.o.Record.Phase, d.Phase) {
		t.Errorf("%s → %s is not an allowed transition", tc.o.Record.Phase, d.Phase)
	}
	if d.Phase != tc.wantPhase || d.Owner != tc.wantOwner {
		t.Fatalf("phase %s owner %q (%s: %s), want %s owner %q", d.Phase, d.Owner, d.Reason, d.Message, tc.wantPhase, tc.wantOwner)
	}
	if tc.wantReason != "" && d.Reason != tc.wantReason {
		t.Errorf("reason %s (%s), want %s", d.Reason, d.Message, tc.wantReason)
	}
	if tc.wantActions != nil && !slices.Equal(d.Actions, tc.wantActions) {
		t.Errorf("actions %v, want %v", d.Actions, tc.wantActions)
	}
	if d.Recheck != tc.wantRecheck {
		t.Errorf("recheck in %s, want %s", d.Recheck, tc.wantRecheck)
	}
}

// TestEveryTransitionIsCovered checks that the table tests exercise every transition the
// Transitions table allows, so that the table and the tests move together.
func TestEveryTransitionIsCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range append(decideCases(), restoreCases()...) {
		seen[fmt.Sprint(tc.o.Record.Phase, "→", Decide(tc.o).Phase)] = true
	}
	for _, tr := range Transitions {
		if !seen[fmt.Sprint(tr.From, "→", tr.To)] {
			t.Errorf("no table test covers %q → %q (%s)", tr.From, tr.To, tr.Name)
		}
	}
}

// TestFencedOffIsRecorded: the decision that takes a volume from a fenced owner records the
// owner, which stays recorded while its Fence holds and goes with the Fence or the target.
func TestFencedOffIsRecorded(t *testing.T) {
	moving := Record{Owner: "a", Phase: storagev1alpha1.Moving}
	o := obs(rwo, map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}, "b": placed},
		map[string]Presence{"a": {State: sync, Leaving: true, Downstream: true}}, moving)
	o.Targets["a"] = Target{Name: "target-a", UnreachableSince: o.Now.Add(-time.Hour), CanFence: true, FenceDelay: time.Minute,
		Domains: []string{"d"}, Class: class("d", "gold"), Fences: map[string]fencing.State{"d": fencing.Fenced}}
	if d := Decide(o); !slices.Equal(d.FencedOff, []string{"a"}) {
		t.Fatalf("FencedOff %v after %s, want [a]", d.FencedOff, d.Reason)
	}
	bound := obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, Record{Owner: "b", Phase: storagev1alpha1.Bound, FencedOff: []string{"a"}})
	for _, tc := range []struct {
		name   string
		target *Target
		want   []string
	}{
		{"the Fence holds", &Target{Name: "target-a", Domains: []string{"d"}, Fences: map[string]fencing.State{"d": fencing.Unfencing}}, []string{"a"}},
		{"the Fence is gone", &Target{Name: "target-a", Domains: []string{"d"}}, nil},
		{"only a Fence in another domain holds", &Target{Name: "target-a", Domains: []string{"d"}, Fences: map[string]fencing.State{"e": fencing.Fenced}}, nil},
		{"the target is gone", nil, nil},
	} {
		o := bound
		o.Targets = maps.Clone(bound.Targets)
		delete(o.Targets, "a")
		if tc.target != nil {
			o.Targets["a"] = *tc.target
		}
		if d := Decide(o); !slices.Equal(d.FencedOff, tc.want) {
			t.Errorf("%s: FencedOff %v, want %v", tc.name, d.FencedOff, tc.want)
		}
	}
}

// TestAGrantRecordsTheCopysPolicy: the decision that gives a moved volume to its new owner
// records the policy of the copy it gives, Retain, as the next decision, which sees the copy,
// does: the record of the move is not written a second time for the policy alone.
func TestAGrantRecordsTheCopysPolicy(t *testing.T) {
	grant := Decide(obs(rwo, map[string]Presence{"b": placed}, map[string]Presence{}, Record{Owner: "a", Phase: storagev1alpha1.Moving, OriginalReclaim: del}))
	if !slices.Contains(grant.Actions, act(SyncVolume, "b")) {
		t.Fatalf("the grant does %v, want SyncVolume to b", grant.Actions)
	}
	rec := Record{Owner: grant.Owner, Phase: grant.Phase, Reason: grant.Reason, OriginalReclaim: grant.Reclaim.Original}
	after := Decide(obs(rwo, map[string]Presence{"b": synced}, map[string]Presence{"b": pvSync}, rec))
	if grant.Reclaim != after.Reclaim || grant.Reclaim.Current != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("the grant records reclaim %+v and the pass after it %+v, want both Current Retain", grant.Reclaim, after.Reclaim)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		modes []corev1.PersistentVolumeAccessMode
		class *workloadv1alpha1.StorageClassInfo
		want  storagev1alpha1.VolumeClass
	}{
		{rwo, class("d", "x"), storagev1alpha1.Owned},
		{[]corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}, class("d", "x"), storagev1alpha1.Owned},
		{rwx, class("d", "x"), storagev1alpha1.Shared},
		{[]corev1.PersistentVolumeAccessMode{corev1.ReadOnlyMany}, class("d", "x"), storagev1alpha1.Shared},
		{rwx, class("", "x"), storagev1alpha1.Internal},
		{rwo, class("", "x"), storagev1alpha1.Internal},
	} {
		o := Observation{Claim: Claim{AccessModes: tc.modes}, Targets: map[string]Target{"a": {Class: tc.class}}}
		if got, _ := classify(o); got != tc.want {
			t.Errorf("classify(%v, domain %q) = %s, want %s", tc.modes, tc.class.Domain, got, tc.want)
		}
	}
}

// A claim whose class no target of its namespace has says so, by name.
func TestProvisioningNamesTheMissingClass(t *testing.T) {
	fast := "fast"
	for _, tc := range []struct {
		name  string
		class *string
		want  string
	}{
		{"a named class", &fast, `no target of the claim's namespace (a) has storage class "fast"`},
		{"the default class", nil, "no target of the claim's namespace (a) has a default storage class; name one in spec.storageClassName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := obs(rwo, map[string]Presence{"a": placed}, nil, Record{Phase: storagev1alpha1.Pending})
			target := o.Targets["a"]
			target.Class = nil
			o.Targets["a"] = target
			o.Claim.StorageClassName = tc.class
			d := Decide(o)
			if d.Phase != storagev1alpha1.Pending || d.Reason != storagev1alpha1.ReasonStorageClassMissing || d.Message != tc.want {
				t.Fatalf("%s %s: %q; want Pending %s: %q", d.Phase, d.Reason, d.Message, storagev1alpha1.ReasonStorageClassMissing, tc.want)
			}
		})
	}
}

func TestProvisions(t *testing.T) {
	tests := []struct {
		name string
		o    Observation
		want bool
	}{
		{name: "a placed claim is given to a target", o: obs(rwo, map[string]Presence{"a": placed}, nil, Record{}), want: true},
		{name: "a claim provisioning on its target", o: obs(rwo, map[string]Presence{"a": synced}, nil, Record{Owner: "a"})},
		{name: "a claim leaving its target before its volume came up", o: obs(rwo, map[string]Presence{"a": departing, "b": placed}, nil, Record{Owner: "a"})},
		{name: "an owned volume moving", o: obs(rwo, map[string]Presence{"a": departing, "b": placed}, map[string]Presence{"a": pvSync}, Record{Owner: "a"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Decide(tt.o).Provisions(); got != tt.want {
				t.Fatalf("Provisions() = %v, want %v", got, tt.want)
			}
		})
	}
}
