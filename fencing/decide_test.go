package fencing

import (
	"testing"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func TestFenceDecide(t *testing.T) {
	const ok = string(csiaddonsv1alpha1.FencingOperationResultSucceeded)
	fenced := Executed{By: "b", FenceState: storagev1alpha1.Fenced, Result: ok, Message: csiaddonsv1alpha1.FenceOperationSuccessfulMessage}
	unfenced := Executed{By: "b", FenceState: storagev1alpha1.Unfenced, Result: ok, Message: csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage}
	lost := TargetView{Found: true, NetworkFencing: true}
	// asked is when the unfence was asked; reported is a report made after it.
	asked := time.Unix(1000, 0)
	back := lost
	back.Ready, back.Clean, back.ReadySince, back.Reported = true, true, asked.Add(-time.Minute), asked.Add(-30*time.Second)
	// A clean status from before the target came back, not yet reported again.
	unreported := back
	unreported.Reported = asked.Add(-2 * time.Minute)
	reported, stale := back, back
	reported.Reported, stale.Reported = asked.Add(time.Second), asked.Add(-time.Second)
	// lifting is a Fence that held, executed by b, whose unfence was asked at (zero: not yet
	// seen), of target.
	lifting := func(at time.Time, target TargetView) func(*FenceObservation) {
		return func(o *FenceObservation) {
			o.Executor, o.Executed, o.WasFenced, o.UnfenceAsked, o.Target = "b", fenced, true, at, target
		}
	}
	obs := func(state storagev1alpha1.FenceState, mode storagev1alpha1.FenceMode, f func(*FenceObservation)) FenceObservation {
		o := FenceObservation{Spec: storagev1alpha1.FenceSpec{TargetName: "a", Domain: "d", State: state, Mode: mode},
			Target: lost, Executors: []string{"b", "c"}}
		f(&o)
		return o
	}
	for _, tt := range []struct {
		name     string
		o        FenceObservation
		want     storagev1alpha1.FencePhase
		executor string
		unfence  bool
		done     bool
	}{
		{name: "a new Fence goes to the first Ready target of the domain",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(*FenceObservation) {}), want: storagev1alpha1.FenceFencing, executor: "b"},
		{name: "the executor's success fences",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Executor, o.Executed = "b", fenced }), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "a success reported by a former executor is not the new one's answer",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.Executors = "b", fenced, []string{"c"}
			}), want: storagev1alpha1.FenceFencing, executor: "c"},
		{name: "a success of the other operation is not this one's",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed = "b", fenced
				o.Executed.Message = csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage
			}), want: storagev1alpha1.FenceFencing, executor: "b"},
		{name: "a failed NetworkFence fails the Fence",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed = "b", Executed{By: "b", FenceState: storagev1alpha1.Fenced, Result: "Failed", Message: "class missing"}
			}), want: storagev1alpha1.FenceFailed, executor: "b"},
		{name: "no Ready target of the domain: Pending",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Executors = nil }), want: storagev1alpha1.FencePending},
		{name: "no Ready target of the domain: the executor that fenced stays named, its NetworkFence still fencing",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.Phase, o.Executors = "b", fenced, true, storagev1alpha1.FenceFenced, nil
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "an unfence asked while no target can execute it waits for one, if a fence was executed",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executed, o.WasFenced, o.Phase, o.Executors, o.UnfenceAsked, o.Target = fenced, true, storagev1alpha1.FenceFenced, nil, asked, reported
			}), want: storagev1alpha1.FenceFenced},
		{name: "a target without spec.fencing cannot be network fenced",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Target.NetworkFencing = false }), want: storagev1alpha1.FenceFailed},
		{name: "Manual: fenced on the admin's word",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Manual, func(*FenceObservation) {}), want: storagev1alpha1.FenceFenced},
		{name: "the target back and clean: the decision to unfence comes first, the fence stays until a newer report",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.Target = "b", fenced, true, back
			}), want: storagev1alpha1.FenceFenced, executor: "b", unfence: true},
		{name: "back and clean before the fence completed: it is lifted",
			o:    obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Executor, o.Target = "b", back }),
			want: storagev1alpha1.FenceUnfencing, executor: "b", unfence: true},
		{name: "a held Fence of a target that answers and is clean is executed, and holds",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Spec.HeldBy, o.Executor, o.Executed, o.WasFenced, o.Target = "locationpair/shop", "b", fenced, true, back
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "a held Fence of a target that answers goes to an executor",
			o:    obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Spec.HeldBy, o.Target = "locationpair/shop", back }),
			want: storagev1alpha1.FenceFencing, executor: "b"},
		{name: "a held Fence asked to unfence stays fenced, and says who holds it",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, func(o *FenceObservation) {
				lifting(asked, reported)(o)
				o.Spec.HeldBy = "locationpair/shop"
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "back with a clean status from before it came back: stays fenced, and not asked to unfence",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.Target = "b", fenced, true, unreported
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "back but not clean: stays fenced",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.Target = "b", fenced, true, back
				o.Target.Clean = false
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "back and clean, but reported before the unfence was asked: stays fenced",
			o:    obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, lifting(asked, stale)),
			want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "back and clean, the unfence not yet seen asked: stays fenced",
			o:    obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, lifting(time.Time{}, reported)),
			want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "clean reported after the unfence was asked: the executor lifts it",
			o:    obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, lifting(asked, reported)),
			want: storagev1alpha1.FenceUnfencing, executor: "b"},
		{name: "a deleted Fence of a lost target stays fenced",
			o: obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.Deleting = "b", fenced, true, true
			}), want: storagev1alpha1.FenceFenced, executor: "b"},
		{name: "a deleted Fence that never held is lifted at once",
			o:    obs(storagev1alpha1.Fenced, storagev1alpha1.Network, func(o *FenceObservation) { o.Executor, o.Deleting = "b", true }),
			want: storagev1alpha1.FenceUnfencing, executor: "b", unfence: true},
		{name: "the unfence confirmed: done",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, func(o *FenceObservation) {
				o.Executor, o.Executed, o.WasFenced, o.UnfenceAsked, o.Target = "b", unfenced, true, asked, reported
			}), want: storagev1alpha1.FenceUnfenced, executor: "b", done: true},
		{name: "nothing ever executed: nothing to undo",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Network, func(*FenceObservation) {}), want: storagev1alpha1.FenceUnfenced, done: true},
		{name: "Manual, back and clean: unfenced",
			o: obs(storagev1alpha1.Unfenced, storagev1alpha1.Manual, func(o *FenceObservation) {
				o.WasFenced, o.UnfenceAsked, o.Target = true, asked, reported
			}),
			want: storagev1alpha1.FenceUnfenced, done: true},
	} {
		d := FenceDecide(tt.o)
		if d.Phase != tt.want || d.Executor != tt.executor || d.Unfence != tt.unfence || d.Done != tt.done {
			t.Errorf("%s: got phase %s executor %q unfence %v done %v (%s: %s); want %s %q %v %v",
				tt.name, d.Phase, d.Executor, d.Unfence, d.Done, d.Reason, d.Message, tt.want, tt.executor, tt.unfence, tt.done)
		}
	}
}

// TestLiftMidFence replays, step by step as the fencing controller takes them, a target that
// is back and clean while the storage still executes its fence: the Fence must never show
// Fenced before the storage answered, and never hold (for coordination or the target's
// Fenced condition) a fence the storage confirmed only after the lift.
func TestLiftMidFence(t *testing.T) {
	const ok = string(csiaddonsv1alpha1.FencingOperationResultSucceeded)
	returned := time.Unix(1000, 0)
	back := TargetView{Found: true, NetworkFencing: true, Ready: true, Clean: true, ReadySince: returned, Reported: returned.Add(time.Second)}
	f := &storagev1alpha1.Fence{Spec: storagev1alpha1.FenceSpec{TargetName: "a", Domain: "d", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network},
		Status: storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFencing, Executor: "b"}}
	// step decides as the controller does and applies the decision to f.
	step := func(x Executed) FenceDecision {
		t.Helper()
		o := FenceObservation{Spec: f.Spec, Phase: f.Status.Phase, Executor: f.Status.Executor, WasFenced: f.Holds(),
			Executed: x, Target: back, Executors: []string{"b"}}
		if f.Status.UnfenceRequestedTime != nil {
			o.UnfenceAsked = f.Status.UnfenceRequestedTime.Time
		}
		d := FenceDecide(o)
		if d.Unfence {
			f.Spec.State = storagev1alpha1.Unfenced
			return d
		}
		f.Status.Phase, f.Status.Executor, f.Status.Reason = d.Phase, d.Executor, d.Reason
		now := metav1.NewTime(returned.Add(2 * time.Second))
		if f.Status.UnfenceRequestedTime == nil && f.Spec.State == storagev1alpha1.Unfenced {
			f.Status.UnfenceRequestedTime = &now
		}
		if f.Status.FencedTime == nil && d.Phase == storagev1alpha1.FenceFenced {
			f.Status.FencedTime = &now
		}
		return d
	}
	for i, s := range []struct {
		// x is what the executor reports at the step.
		x      Executed
		phase  storagev1alpha1.FencePhase
		reason string
		done   bool
	}{
		// The storage has not answered: the NetworkFence is still Fenced, no result.
		{x: Executed{By: "b", FenceState: storagev1alpha1.Fenced}, reason: "", phase: ""}, // the lift is written first
		{x: Executed{By: "b", FenceState: storagev1alpha1.Fenced}, phase: storagev1alpha1.FenceUnfencing, reason: ReasonWaitingForFenceAnswer},
		{x: Executed{By: "b", FenceState: storagev1alpha1.Fenced}, phase: storagev1alpha1.FenceUnfencing, reason: ReasonWaitingForFenceAnswer},
		// The storage fenced, late; the executor then asks for the unfence.
		{x: Executed{By: "b", FenceState: storagev1alpha1.Fenced, Result: ok, Message: csiaddonsv1alpha1.FenceOperationSuccessfulMessage},
			phase: storagev1alpha1.FenceUnfencing, reason: ReasonUnfencingLateFence},
		{x: Executed{By: "b", FenceState: storagev1alpha1.Unfenced, Result: ok, Message: csiaddonsv1alpha1.FenceOperationSuccessfulMessage},
			phase: storagev1alpha1.FenceUnfencing, reason: ReasonUnfencingLateFence},
		{x: Executed{By: "b", FenceState: storagev1alpha1.Unfenced, Result: ok, Message: csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage},
			phase: storagev1alpha1.FenceUnfenced, reason: ReasonUnfenced, done: true},
	} {
		d := step(s.x)
		if i == 0 {
			if !d.Unfence {
				t.Fatalf("step 0: the target back and clean mid-fence is not unfenced: %+v", d)
			}
			continue
		}
		if d.Phase != s.phase || d.Reason != s.reason || d.Done != s.done {
			t.Errorf("step %d: got %s/%s done %v (%s); want %s/%s done %v", i, d.Phase, d.Reason, d.Done, d.Message, s.phase, s.reason, s.done)
		}
		if f.Holds() || f.Status.FencedTime != nil {
			t.Errorf("step %d: the lifted Fence holds (phase %s, fencedTime %v) on a fence the storage confirmed only after the lift", i, f.Status.Phase, f.Status.FencedTime)
		}
		if Of(f).Holds() {
			t.Errorf("step %d: coordination reads the lifted Fence as holding", i)
		}
	}
}
