package dr

import (
	"reflect"
	"testing"
	"time"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// relocateCases are a relocate: its Quiescing and FinalSync steps, its restore, and when it
// becomes a failover.
func relocateCases() []decideCase {
	return []decideCase{
		{"a declared relocate stops the workloads first", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Pair.Declared, o.Pair.Generation = "west", 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Quiesce, true)
			expect(t, d.Phase, schedulingv1alpha1.PairRelocating)
			expect(t, len(d.Fence), 0)
		}},
		{"a relocate keeps the syncs on their schedule until its workloads stop", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Replications[0].ManualTrigger, "")
		}},
		{"a relocate ends the schedule of the syncs once its workloads stopped", func() Observation {
			return stopped()
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Replications[0].ManualTrigger, stopTrigger(d.Action))
			expect(t, d.Quiesce, true)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for the sync that ends the schedule of 1 volumes, the first ns/c")
		}},
		{"the sync that ended the schedule counts once its destination reported it", func() Observation {
			o := stopped()
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart, r.SourceLastSync = stopTrigger(o.Action), ago(10*time.Second), ago(9*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for the sync that ends the schedule of 1 volumes, the first ns/c")
		}},
		{"a relocate asks for its last sync no sooner than the gap after the sync that ended the schedule", func() Observation {
			o := stopped()
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSync, r.DestinationLastSync = stopTrigger(o.Action), ago(2*time.Second), ago(1500*time.Millisecond)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Replications[0].ManualTrigger, stopTrigger(d.Action))
			expect(t, d.Recheck, 1500*time.Millisecond)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for 3s after the sync that ended the schedule of every volume, before the last sync")
		}},
		{"a member's time ahead of the hub's does not hold a relocate longer than the gap", func() Observation {
			o := stopped()
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSync, r.DestinationLastSync = stopTrigger(o.Action), ago(-time.Hour), ago(-time.Hour)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Recheck, syncGap)
		}},
		{"a relocate whose workloads stopped, and whose schedule ended the gap ago, asks for a last sync", func() Observation {
			o := stopped()
			o.Volumes[0].Replication.LastManualSync = stopTrigger(o.Action)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFinalSync)
			expect(t, d.Replications[0].ManualTrigger, trigger(d.Action))
			expect(t, d.Active, "east")
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "True/FinalSync")
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for the last sync of 1 volumes, the first ns/c")
		}},
		{"a relocate waits until every volume replicates to the other Location", func() Observation {
			o := pair()
			o.Pair.Declared, o.Pair.Generation = "west", 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, d.Active, "east")
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "False/WaitingForReplicas")
			expect(t, d.Waiting, "relocate to west asked: waiting for ns/c to replicate to west first")
		}},
		{"a relocate's restore keeps the last sync's trigger, so no scheduled sync replaces its image", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications[0].ManualTrigger, trigger(d.Action))
			expect(t, d.Quiesce, true)
		}},
		{"a relocate under way stays quiesced while its Locations cannot be read", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			o.Locations["west"] = Location{Name: "west"}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairPending)
			expect(t, d.Quiesce, true)
		}},
		{"a relocate says which volume is still in use", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for 1 volumes to be used by no pod, the first ns/c on e1")
		}},
		{"the last sync reported before its snapshot is ready is waited for", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart, r.ImageReady = trigger(o.Action), ago(time.Second), false
			r.Image = replica(dest, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFinalSync)
			expect(t, d.Quiesce, true)
			expect(t, len(d.Replicas), 0)
		}},
		{"a destination sync that completed before the last sync started does not end it", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart = trigger(o.Action), ago(time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFinalSync)
		}},
		{"a destination sync reported to the second below the last sync's start ends it", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			r := o.Volumes[0].Replication
			// The source's start is .3 into a second; the destination completed later in that
			// second, and is reported at its start, as the API keeps times.
			second := ago(time.Minute).Truncate(time.Second)
			r.LastManualSync, r.SourceLastSyncStart, r.DestinationLastSync = trigger(o.Action), second.Add(300*time.Millisecond), second
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
		}},
		{"a relocate's ready last sync is recorded and the claims are asked to restore from it", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart, r.DestinationLastSync = trigger(o.Action), ago(2*time.Second), ago(time.Second)
			r.Image = replica(dest, 2*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "east")
			expect(t, d.Replicas, map[string]storagev1alpha1.Replica{"ns/c": *replica(dest, 2*time.Second)})
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-" + dest})
			expect(t, d.Quiesce, true)
		}},
		{"a relocate's workloads start again once every volume is back", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			o.Volumes[0].Owner = dest
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Quiesce, false)
			expect(t, d.Phase, schedulingv1alpha1.PairRelocated)
		}},
		{"a declared relocate from a Location where nothing answers fails over", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(10*time.Second))
			o.Pair.Declared, o.Pair.Generation = "west", 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, false)
		}},
		{"a relocate whose Location is lost past the threshold becomes a failover, on its own", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 3*time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, true)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "east")
			expect(t, d.Quiesce, false)
		}},
		{"a relocate whose Location is lost does not become a failover on its own under the brake on mass failure", func() Observation {
			o := underBrake(6)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 3*time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Active, "east")
			expect(t, len(d.Fence), 0)
		}},
		{"a relocate whose Location is lost does not become a failover on its own while a volume bound since has no replica where it goes", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 3*time.Minute)
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "new", Owner: "e2", Bound: true})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Active, "east")
		}},
		{"a relocate whose Location stopped answering says so while it waits", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(10*time.Second))
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
			expect(t, d.Quiesce, true)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing), "relocate east to west: waiting for a target of east to answer; the relocate becomes a failover once east is lost for the threshold with automatic failover on, or when spec.switchMode asks for a failover")
		}},
		failoverAskedAt(schedulingv1alpha1.ProgressionQuiescing),
		failoverAskedAt(schedulingv1alpha1.ProgressionFinalSync),
		{"a relocate that restores already is not turned into a failover", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, time.Minute)
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
		}},
		{"an action under way is carried on whatever the spec says now", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Pair.Declared, o.Pair.Generation = "east", 3
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.To, "west")
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
		}},
	}
}

// failoverAskedAt is the case of a relocate waiting at step whose spec now asks for a
// failover to the same Location: it becomes one, fencing first.
func failoverAskedAt(step string) decideCase {
	return decideCase{
		name: "a relocate at " + step + " becomes a failover when the spec asks for one, fencing first",
		o: func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, step, time.Minute)
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		},
		check: func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, false)
			expect(t, d.Action.Generation, int64(2))
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFencing)
			expect(t, d.Active, "east")
			expect(t, d.Fence, []string{"e1", "e2"})
			expect(t, d.Quiesce, true)
		},
	}
}

// stopped is a relocate from east to west, begun 5s ago, whose workloads stopped.
func stopped() Observation {
	o := replicating(pair(), time.Minute)
	o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
	return o
}

func TestRelocate(t *testing.T) { runCases(t, relocateCases()) }

// A relocate that keeps the replications as they are (on its triggers) keeps the class each
// destination keeps its replicas in: a destination made again while it syncs makes its
// volume in that class, not in the class the volume has where it runs.
func TestRelocateKeepsTheReplicationsClass(t *testing.T) {
	east := "east"
	o := Observation{Volumes: []Volume{
		{Namespace: "app", Claim: "mapped", Replication: &Replication{Source: "m2", Destination: "m1", Class: &east}},
		{Namespace: "app", Claim: "own", Replication: &Replication{Source: "m2", Destination: "m1"}},
		{Namespace: "app", Claim: "none"},
	}}
	got := o.triggered("relocate-1")
	want := []Want{
		{Namespace: "app", Claim: "mapped", Source: "m2", Destination: "m1", Class: &east, ManualTrigger: "relocate-1"},
		{Namespace: "app", Claim: "own", Source: "m2", Destination: "m1", ManualTrigger: "relocate-1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("triggered replications %+v, want %+v", got, want)
	}
}
