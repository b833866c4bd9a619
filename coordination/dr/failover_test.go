package dr

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// underBrake is a pair whose active Location is lost while unreachable of the hub's 10
// targets are Unreachable, under the default brake.
func underBrake(unreachable int) Observation {
	o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
	o.Brake, o.Targets, o.Unreachable = fencing.DefaultBrake, 10, unreachable
	return o
}

// declaredFailover declares a failover of o's pair to west.
func declaredFailover(o Observation) Observation {
	o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
	return o
}

// failedOverAsDeclared checks a decision that started the declared failover to west.
func failedOverAsDeclared(t *testing.T, d Decision) {
	t.Helper()
	expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
	expect(t, d.Action.Automatic, false)
}

// failoverCases are a failover: when one starts, on its own or declared, and its Fencing step,
// which restores or is called off.
func failoverCases() []decideCase {
	return []decideCase{
		{"an active Location unreachable for less than the threshold does not fail over", func() Observation {
			return with(replicating(pair(), time.Minute), "east", lost(30*time.Second))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, condition(d, schedulingv1alpha1.ConditionAvailable), "False/LocationUnavailable")
		}},
		{"a lost active Location fails over on its own, straight to restoring as nothing answers to fence, and stays active until the claims are seen asked", func() Observation {
			return with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, true)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "east")
			expect(t, d.Phase, schedulingv1alpha1.PairFailingOver)
			expect(t, d.Fence, []string{"e1", "e2"})
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
		}},
		{"a lost active Location does not fail over on its own to a Location that has no replica of a volume", func() Observation {
			return with(pair(), "east", lost(2*time.Minute))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, d.Active, "east")
			expect(t, d.Restores == nil, true)
			expect(t, len(d.Fence), 0)
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "False/"+schedulingv1alpha1.ReasonWaitingForReplicas)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing), "east is lost, but west has no replica of ns/c: a failover on its own starts no workload away from its data; declare one (kubectl custody failover) to go anyway")
		}},
		{"a lost active Location fails over on its own past a claim not protected, which it leaves waiting and never replicates", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
			o.Unprotected = []Volume{{Namespace: "ns", Claim: "scratch", Owner: "e2", Bound: true}}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Active, "east")
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/" + replica(dest, time.Minute).Snapshot, "ns/scratch": ""})
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
		}},
		{"a claim not protected is not replicated, and says why", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Unprotected = []Volume{{Namespace: "ns", Claim: "scratch", Owner: "e2", Bound: true}}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
			expect(t, d.Volumes, int32(1))
			expect(t, volumeCondition(d, "ns/scratch"), "False/"+schedulingv1alpha1.ReasonNotProtected+": the claim is labelled storage.custody.dev/protect=false: the pair does not replicate it, and a switch of Locations leaves it Pending where it is")
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "True/"+schedulingv1alpha1.ReasonReplicated)
		}},
		{"a declared failover goes to a Location with no replica, active at once as no claim restores", func() Observation {
			return declaredFailover(with(pair(), "east", lost(2*time.Minute)))
		}, func(t *testing.T, d Decision) {
			failedOverAsDeclared(t, d)
			expect(t, d.Active, "west")
		}},
		{"a lost active Location among more Unreachable targets than the brake allows does not fail over on its own", func() Observation {
			return underBrake(6)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, d.Active, "east")
			expect(t, len(d.Fence), 0)
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "False/"+schedulingv1alpha1.ReasonMassFailure)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing), "east is lost, and 6 of the hub's 10 targets are Unreachable at once, more than the brake allows: the pair does not fail over by itself, as a split of the hub's network looks the same; declare a failover (kubectl custody failover) to go anyway")
		}},
		{"a lost active Location among no more Unreachable targets than the brake allows fails over", func() Observation {
			return underBrake(5)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, true)
		}},
		{"a declared failover goes ahead under the brake, active once the claims are seen asked to restore", func() Observation {
			return declaredFailover(underBrake(6))
		}, func(t *testing.T, d Decision) {
			failedOverAsDeclared(t, d)
			expect(t, d.Active, "east")
		}},
		{"one target of the active Location still answering keeps it from being lost", func() Observation {
			return with(replicating(pair(), time.Minute), "east", lost(2*time.Minute), "e1")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
		}},
		{"automatic failover off waits", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
			o.Pair.Automatic = false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, d.Active, "east")
		}},
		{"no failover when both Locations were cut off together, as by an outage of the hub, until the threshold passed since the other answered again", func() Observation {
			return with(with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), "west", readySince(10*time.Second))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, d.Recheck, 50*time.Second)
		}},
		{"no failover to a Location with no target that answers", func() Observation {
			return with(with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), "west", lost(time.Second))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/LocationUnavailable")
		}},
		{"a declared failover fences the active Location's targets that answer first", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFencing)
			expect(t, d.Action.Automatic, false)
			expect(t, d.Action.Generation, int64(2))
			expect(t, d.Active, "east")
			expect(t, d.Fence, []string{"e1", "e2"})
		}},
		{"a failover waits for a target that answers until its fence holds", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced), "e1")
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return with(o, "east", fenceState(fencing.Failed), "e2")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFencing)
			expect(t, d.Active, "east")
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"failover east to west: waiting for the Fences of [e2] to hold")
		}},
		{"an automatic failover is called off when its Location answers again before it is fenced, and then protects as before", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute), "e2")
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			o.Action.Automatic = true
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCalledOff)
			expect(t, d.Active, "east")
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, d.Fence == nil, true)
			expect(t, d.Quiesce, false)
			expect(t, d.Restores == nil, true)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"the failover from east to west was called off at "+d.Action.ProgressionTime.UTC().Format(time.RFC3339)+": east answered again before it was fenced, and stays active")
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute), "e2")
			o.Action = d.Action
			next := Decide(o)
			expect(t, next.Action.Progression, schedulingv1alpha1.ProgressionCalledOff)
			expect(t, condition(next, schedulingv1alpha1.ConditionProgressing), "False/FailoverCalledOff")
			expect(t, next.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
		}},
		{"an automatic failover goes on when the target that answers again is fenced already", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute), "e2")
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			o.Action.Automatic = true
			return with(o, "east", fenceState(fencing.Fenced), "e1")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "east")
		}},
		{"once fenced, the claims are asked to restore in the other Location", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "east")
			expect(t, d.Phase, schedulingv1alpha1.PairFailingOver)
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-" + dest})
		}},
		{"a lost Location with a target whose fencing is not verified does not fail over by itself, and says which", func() Observation {
			return with(with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), "east", func(t *Target) {
				t.Unverified = "node CIDR 10.9.0.0/24 matches no client of domain east"
			}, "e2")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "False/"+schedulingv1alpha1.ReasonFencingUnverified)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing), "east is lost, but the fencing of its target e2 is not verified (node CIDR 10.9.0.0/24 matches no client of domain east): the pair does not fail over by itself, as a Fence might not cut it off; correct the target's spec.fencing, fence it by hand, or declare a failover (kubectl custody failover) to go anyway")
		}},
		{"a target whose fencing is not verified but that is fenced by hand does not hold the failover up", func() Observation {
			o := with(with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), "east", func(t *Target) {
				t.Unverified = "node CIDR 10.9.0.0/24 matches no client of domain east"
			}, "e2")
			return with(o, "east", fenceState(fencing.Fenced), "e2")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Active, "east")
		}},
		{"a declared failover goes ahead past a target whose fencing is not verified", func() Observation {
			return declaredFailover(with(with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), "east", func(t *Target) {
				t.Unverified = "node CIDR 10.9.0.0/24 matches no client of domain east"
			}, "e2"))
		}, failedOverAsDeclared},
		{"a failover restores a volume whose class the pair maps in the class mapped, and one whose class it keeps as it is", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			o.Pair.Classes = []schedulingv1alpha1.StorageClassMapping{{Primary: "gold", Secondary: "slow"}}
			o.Volumes[0].StorageClass, o.Volumes[0].NamedClass = ptr.To("gold"), ptr.To("gold")
			o.Volumes = append(o.Volumes, o.Volumes[0])
			o.Volumes[1].Claim, o.Volumes[1].StorageClass, o.Volumes[1].NamedClass = "d", ptr.To("fast"), ptr.To("fast")
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-" + dest, "ns/d": dest + "/snap-" + dest})
			expect(t, d.Classes, map[string]string{"ns/c": "slow"})
		}},
		{"a switch back restores a volume of a mapped class in the class its claim names", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 9*time.Minute, 11*time.Minute, time.Minute)
			o.Pair.Classes = []schedulingv1alpha1.StorageClassMapping{{Primary: "fast", Secondary: "slow"}}
			o.Volumes[0].StorageClass, o.Volumes[0].NamedClass = ptr.To("slow"), ptr.To("fast")
			o.Volumes[0].Bound, o.Volumes[0].Replication.ImageKept = true, true
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "east", schedulingv1alpha1.Failover, 2
			o = with(o, "west", fenceState(fencing.Fenced))
			o.Action = &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "west", To: "east", Generation: 2,
				Progression: schedulingv1alpha1.ProgressionFencing, StartTime: metav1.NewTime(ago(time.Second))}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, len(d.Restores), 1)
			expect(t, d.Classes, map[string]string{"ns/c": ""})
		}},
		{"a failover asks the destinations to keep their images, and restores once the latest is kept", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
			o.Volumes[0].Replication.ImageKept = false
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFencing)
			expect(t, d.Restores == nil, true)
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest, KeepImages: true}})
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"failover east to west: waiting for 1 destinations to keep their latest images from VolSync's rotation, the first ns/c on "+dest)
		}},
		restoresFromImage("a failover restores from a ready image newer than the recorded replica, and records it",
			4*time.Minute, storagev1alpha1.Replica{Target: dest, Snapshot: "snap-newer", Time: metav1.NewTime(ago(30 * time.Second))}),
		// VolSync times the next image from the end of the sync before, to the second: it can
		// seem to begin before the recorded one, which its rotation deleted.
		restoresFromImage("a failover restores from the destination's latest image, kept, though timed a second before the recorded replica it replaced",
			time.Minute, storagev1alpha1.Replica{Target: dest, Snapshot: "snap-next", Time: metav1.NewTime(ago(time.Minute + time.Second))}),
		{"the replication back from a completed failover keeps no image", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 9*time.Minute, 11*time.Minute, time.Minute)
			o.Volumes[0].Bound = true
			o.Volumes[0].Replication.KeepImages = true
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: dest, Destination: Destination("ns", []string{"e1", "e2"})}})
		}},
		switchAfter("after a failover called off", calledOff, schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing),
		switchAfter("after a failover called off", calledOff, schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing),
	}
}

func TestFailover(t *testing.T) { runCases(t, failoverCases()) }

// restoresFromImage is the case of a failover whose destination's latest image, ready and
// kept as the Fencing step asked, is image, and whose recorded replica is recorded ago: it
// restores from the image, and records it; the destination goes on keeping its images.
func restoresFromImage(name string, recorded time.Duration, image storagev1alpha1.Replica) decideCase {
	return decideCase{name: name, o: func() Observation {
		o := with(replicating(pair(), recorded), "east", lost(2*time.Minute))
		o.Volumes[0].Replication.Image, o.Volumes[0].Replication.KeepImages = &image, true
		o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
		return o
	}, check: func(t *testing.T, d Decision) {
		expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
		expect(t, d.Restores, map[string]string{"ns/c": dest + "/" + image.Snapshot})
		expect(t, d.Replicas["ns/c"].Snapshot, image.Snapshot)
		expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest, KeepImages: true}})
	}}
}
