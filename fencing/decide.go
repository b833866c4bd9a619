package fencing

import (
	"fmt"
	"slices"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// Reasons a Fence gives for its phase.
const (
	ReasonPoweredOff         = "PoweredOff"
	ReasonNoExecutor         = "NoExecutor"
	ReasonNoNetworkFencing   = "NoNetworkFencing"
	ReasonExecuting          = "Executing"
	ReasonNetworkFenceFailed = "NetworkFenceFailed"
	ReasonFenced             = "Fenced"
	ReasonWaitingForClean    = "WaitingForClean"
	ReasonUnfenced           = "Unfenced"
	// ReasonWaitingForFenceAnswer: the Fence was lifted while the storage still executed the
	// fence. A storage operation under way cannot be called back, so the unfence is asked
	// once the storage answered the fence; until then the Fence is Unfencing, never Fenced.
	ReasonWaitingForFenceAnswer = "WaitingForFenceAnswer"
	// ReasonUnfencingLateFence: the storage fenced the target after the Fence was lifted;
	// the executor unfences it.
	ReasonUnfencingLateFence = "UnfencingLateFence"
)

// TargetView is what the fencing decision reads of the fenced target.
type TargetView struct {
	// Found: the SyncTarget exists.
	Found bool
	// Ready: its syncer heartbeats.
	Ready bool
	// Clean: its syncer reported that it holds nothing in the domain that the hub no longer
	// gives it.
	Clean bool
	// Reported is when the target last made the report that Clean reads
	// (workloadv1alpha1.SyncTarget.CleanReportedAt).
	Reported time.Time
	// ReadySince is when the target last turned Ready: a report made before says nothing of
	// what it holds since it came back.
	ReadySince time.Time
	// NetworkFencing: it has a spec.fencing, so a NetworkFence can cut it off.
	NetworkFencing bool
}

// Executed is what the executor last reported of its NetworkFence.
type Executed struct {
	// By is the executor that reported it.
	By         string
	FenceState storagev1alpha1.FenceState
	Result     string
	Message    string
}

// FenceObservation is everything FenceDecide reads about one Fence.
type FenceObservation struct {
	Spec     storagev1alpha1.FenceSpec
	Deleting bool
	// Phase, Executor, Executed and WasFenced are the Fence's status so far; WasFenced is
	// true once the storage confirmed the fence while the Fence still asked for it, and until
	// it confirmed the unfence. A fence the storage confirms only after the lift was asked
	// never held for coordination, which reads a lifted Fence as holding nothing.
	Phase     storagev1alpha1.FencePhase
	Executor  string
	Executed  Executed
	WasFenced bool
	// UnfenceAsked is when the controller first saw the spec ask for the unfence; zero
	// before.
	UnfenceAsked time.Time
	Target       TargetView
	// Executors are the Ready targets of the domain other than the fenced one, sorted.
	Executors []string
}

// FenceDecision is what the fencing controller writes.
type FenceDecision struct {
	Phase           storagev1alpha1.FencePhase
	Reason, Message string
	Executor        string
	// Unfence: set the spec's state to Unfenced, before anything else.
	Unfence bool
	// Done: the target is unfenced (or never was): drop the finalizer and the Fence.
	Done bool
}

// FenceDecide decides one step of a Fence. It never lets the target reach the storage again
// before the storage confirmed the unfence, and never unfences a target that did not report
// clean, unless the target no longer exists. A target that is back and clean is unfenced,
// also when it came back before the Fence completed, unless a holder keeps the Fence.
func FenceDecide(o FenceObservation) FenceDecision {
	want := o.Spec.State
	var d FenceDecision
	back := o.Target.Ready && o.Target.Clean && o.Target.Reported.After(o.Target.ReadySince) && o.Spec.HeldBy == ""
	// A deleted Fence that holds a target that still exists is lifted only once it is back.
	if want != storagev1alpha1.Unfenced && (back || o.Deleting && (!o.WasFenced || !o.Target.Found)) {
		d.Unfence, want = true, storagev1alpha1.Unfenced
	}
	// A Fence that held is lifted only on a clean report made after the unfence was asked:
	// until coordination saw the request, it could take volumes from the target without its
	// acknowledgement, which an older report still counted as the target's own.
	cleanSinceAsked := back && !o.UnfenceAsked.IsZero() && o.Target.Reported.After(o.UnfenceAsked)
	if (want == storagev1alpha1.Unfenced || o.Deleting) && o.WasFenced && o.Target.Found && !cleanSinceAsked {
		d.Phase, d.Reason = storagev1alpha1.FenceFenced, ReasonWaitingForClean
		d.Message = fmt.Sprintf("%s stays fenced off %s until its syncer is back and reports, after the unfence was asked, that it holds nothing it should not", o.Spec.TargetName, o.Spec.Domain)
		if o.Spec.HeldBy != "" {
			d.Message = fmt.Sprintf("%s stays fenced off %s while %s holds the Fence: it lets go once the target reports clean after the failover", o.Spec.TargetName, o.Spec.Domain, o.Spec.HeldBy)
		}
		d.Executor = o.Executor
		return d
	}
	if o.Spec.Mode == storagev1alpha1.Manual {
		return manual(o, want, d)
	}
	return network(o, want, d)
}

func manual(o FenceObservation, want storagev1alpha1.FenceState, d FenceDecision) FenceDecision {
	if want == storagev1alpha1.Fenced {
		d.Phase, d.Reason = storagev1alpha1.FenceFenced, ReasonPoweredOff
		d.Message = "an admin stated that " + o.Spec.TargetName + " is powered off"
		return d
	}
	d.Phase, d.Reason, d.Done = storagev1alpha1.FenceUnfenced, ReasonUnfenced, true
	d.Message = o.Spec.TargetName + " is back and clean"
	return d
}

func network(o FenceObservation, want storagev1alpha1.FenceState, d FenceDecision) FenceDecision {
	if want == storagev1alpha1.Unfenced && o.Executor == "" && !o.WasFenced {
		// Nothing was ever executed: there is nothing to undo.
		d.Phase, d.Reason, d.Done = storagev1alpha1.FenceUnfenced, ReasonUnfenced, true
		d.Message = "nothing was fenced"
		return d
	}
	if !o.Target.NetworkFencing && want == storagev1alpha1.Fenced {
		d.Phase, d.Reason = storagev1alpha1.FenceFailed, ReasonNoNetworkFencing
		d.Message = fmt.Sprintf("SyncTarget %s has no spec.fencing; if its member is powered off, say so with kubectl custody fence %s --powered-off", o.Spec.TargetName, o.Spec.TargetName)
		return d
	}
	d.Executor = o.Executor
	if !slices.Contains(o.Executors, d.Executor) {
		if len(o.Executors) == 0 {
			// The executor stays named while none can take over: its NetworkFence may still
			// fence the target, and only its syncer can undo that.
			d.Phase, d.Reason = o.Phase, ReasonNoExecutor
			if d.Phase == "" {
				d.Phase = storagev1alpha1.FencePending
			}
			d.Message = "no Ready target of storage domain " + o.Spec.Domain + " can execute the NetworkFence"
			return d
		}
		d.Executor = o.Executors[0]
	}
	// Only the executor's own report is its answer.
	x := o.Executed
	if x.By != d.Executor {
		x = Executed{}
	}
	switch {
	case x.FenceState == want && x.Result == string(csiaddonsv1alpha1.FencingOperationResultSucceeded) && x.Message == successMessage(want):
		if want == storagev1alpha1.Fenced {
			d.Phase, d.Reason = storagev1alpha1.FenceFenced, ReasonFenced
			d.Message = fmt.Sprintf("%s is fenced off %s by a NetworkFence in %s", o.Spec.TargetName, o.Spec.Domain, d.Executor)
			return d
		}
		d.Phase, d.Reason, d.Done = storagev1alpha1.FenceUnfenced, ReasonUnfenced, true
		d.Message = fmt.Sprintf("%s may reach %s again", o.Spec.TargetName, o.Spec.Domain)
	case x.FenceState == want && x.Result == string(csiaddonsv1alpha1.FencingOperationResultFailed):
		d.Phase, d.Reason = storagev1alpha1.FenceFailed, ReasonNetworkFenceFailed
		d.Message = fmt.Sprintf("the NetworkFence in %s failed: %s", d.Executor, x.Message)
	case want == storagev1alpha1.Unfenced && x.FenceState == storagev1alpha1.Fenced && x.Result == "":
		// Lifted mid-fence: the executor asks for the unfence once the storage answered.
		d.Phase, d.Reason = storagev1alpha1.FenceUnfencing, ReasonWaitingForFenceAnswer
		d.Message = fmt.Sprintf("the Fence was lifted while the storage still executes the fence of %s asked by the NetworkFence in %s; "+
			"an operation under way cannot be called back, so the unfence is asked once the storage answers", o.Spec.TargetName, d.Executor)
	case want == storagev1alpha1.Unfenced && !o.WasFenced && StorageFenced(x):
		d.Phase, d.Reason = storagev1alpha1.FenceUnfencing, ReasonUnfencingLateFence
		d.Message = fmt.Sprintf("the storage fenced %s off %s after the Fence was lifted; the NetworkFence in %s unfences it", o.Spec.TargetName, o.Spec.Domain, d.Executor)
	default:
		d.Phase, d.Reason = storagev1alpha1.FenceFencing, ReasonExecuting
		if want == storagev1alpha1.Unfenced {
			d.Phase = storagev1alpha1.FenceUnfencing
		}
		d.Message = fmt.Sprintf("%s executes a NetworkFence (%s) for %s", d.Executor, want, o.Spec.TargetName)
	}
	return d
}

// StorageFenced tells whether the executor's last report is the storage's confirmation of a
// fence: the target is cut off, whatever the Fence asks for now, until the storage confirms
// the unfence.
func StorageFenced(x Executed) bool {
	return x.By != "" && x.Result == string(csiaddonsv1alpha1.FencingOperationResultSucceeded) &&
		x.Message == csiaddonsv1alpha1.FenceOperationSuccessfulMessage
}

// successMessage is what csi-addons reports when the operation for state succeeded.
func successMessage(state storagev1alpha1.FenceState) string {
	if state == storagev1alpha1.Unfenced {
		return csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage
	}
	return csiaddonsv1alpha1.FenceOperationSuccessfulMessage
}
