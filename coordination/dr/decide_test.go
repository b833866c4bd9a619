package dr

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func replica(target string, age time.Duration) *storagev1alpha1.Replica {
	return &storagev1alpha1.Replica{Target: target, Snapshot: "snap-" + target, Time: metav1.NewTime(ago(age))}
}

// pair observes the pair east (primary: e1, e2) and west (secondary: w1, w2), every target
// Ready, with one volume ns/c bound on e1 and no replication yet.
func pair() Observation {
	loc := func(name string, keys ...string) Location {
		l := Location{Name: name, Found: true}
		for _, k := range keys {
			l.Targets = append(l.Targets, Target{Key: k, Ready: true, Clean: true, Classes: []string{"fast", "slow"}, DefaultClass: "fast"})
		}
		return l
	}
	return Observation{
		Now: now,
		Pair: Pair{Primary: "east", Secondary: "west", Generation: 1, Mode: schedulingv1alpha1.Relocate, Automatic: true,
			Threshold: time.Minute, Interval: 5 * time.Minute, Schedule: "*/5 * * * *"},
		Locations: map[string]Location{"east": loc("east", "e1", "e2"), "west": loc("west", "w1", "w2")},
		Volumes:   []Volume{{Namespace: "ns", Claim: "c", Owner: "e1", Bound: true}},
	}
}

// dest is where ns's replicas go in west, and otherDest the other target there.
var (
	dest      = Destination("ns", []string{"w1", "w2"})
	otherDest = otherThan(dest, "w1", "w2")
)

// otherThan is the one of two keys that is not key.
func otherThan(key, a, b string) string {
	if key == a {
		return b
	}
	return a
}

// failedOver is the pair after a failover from east, whose targets are fenced and have not
// reported since, to west, completed five minutes ago: the volume, bound on dest, does not
// replicate yet.
func failedOver() Observation {
	o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
	o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionCompleted, 10*time.Minute)
	done := metav1.NewTime(ago(5 * time.Minute))
	o.Action.CompletionTime = &done
	o.Volumes[0].Owner, o.Volumes[0].Replication = dest, nil
	return o
}

// replicating gives the volume a replication from e1 to dest whose last sync made a ready
// image age old, recorded on the claim.
func replicating(o Observation, age time.Duration) Observation {
	img := replica(dest, age)
	o.Volumes[0].Replication = &Replication{Source: "e1", Destination: dest, SourceLastSyncStart: img.Time.Time,
		SourceLastSync: img.Time.Add(time.Second), DestinationLastSync: img.Time.Add(time.Second), Image: img, ImageReady: true, ImageKept: true}
	o.Volumes[0].Replica = img
	return o
}

// replicatingBack is a pair after a switch of mode to west, begun started ago and completed
// done ago: the volume, restored on dest from the replica recorded recorded ago, replicates back
// to east, whose last sync made a ready image image ago.
func replicatingBack(mode schedulingv1alpha1.SwitchMode, started, done, recorded, image time.Duration) Observation {
	o := pair()
	o.Active, o.Action = "west", action(mode, schedulingv1alpha1.ProgressionCompleted, started)
	completed := metav1.NewTime(ago(done))
	o.Action.CompletionTime = &completed
	back := Destination("ns", []string{"e1", "e2"})
	o.Volumes[0].Owner, o.Volumes[0].Replica = dest, replica(dest, recorded)
	o.Volumes[0].Replication = &Replication{Source: dest, Destination: back, Image: replica(back, image), ImageReady: true}
	return o
}

// with changes the targets of loc that keys name.
func with(o Observation, loc string, change func(*Target), keys ...string) Observation {
	l := o.Locations[loc]
	l.Targets = slices.Clone(l.Targets)
	for i := range l.Targets {
		if len(keys) == 0 || slices.Contains(keys, l.Targets[i].Key) {
			change(&l.Targets[i])
		}
	}
	o.Locations[loc] = l
	return o
}

func lost(since time.Duration) func(*Target) {
	return func(t *Target) { t.Ready, t.UnreachableSince = false, ago(since) }
}

func readySince(since time.Duration) func(*Target) {
	return func(t *Target) { t.Ready, t.UnreachableSince, t.ReadySince = true, time.Time{}, ago(since) }
}

func fenceState(s fencing.State) func(*Target) { return func(t *Target) { t.Fence = s } }

func action(mode schedulingv1alpha1.SwitchMode, progression string, started time.Duration) *schedulingv1alpha1.PairAction {
	return &schedulingv1alpha1.PairAction{Mode: mode, From: "east", To: "west", Generation: 1, Progression: progression,
		StartTime: metav1.NewTime(ago(started))}
}

func condition(d Decision, t string) string {
	c := meta.FindStatusCondition(d.Conditions, t)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason
}

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     func() Observation
		check func(t *testing.T, d Decision)
	}{
		{"a missing Location leaves the pair Pending and its replications as they are", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Locations["west"] = Location{Name: "west"}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairPending)
			expect(t, len(d.Replications), 1)
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "Unknown/LocationNotFound")
		}},
		{"a bound volume replicates from its owner to its namespace's destination", pair, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "False/Idle")
			expect(t, d.Active, "east")
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/NoReplica")
			expect(t, condition(d, schedulingv1alpha1.ConditionAvailable), "True/LocationAvailable")
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "True/PeerReady")
			expect(t, d.Volumes, int32(1))
			expect(t, d.Protected, int32(0))
		}},
		{"a volume whose owner is lost keeps its replication, and with it the replicas a failover needs", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(30*time.Second), "e1")
			o.Volumes[0].Bound = false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
		}},
		{"a volume whose class the destination lacks does not replicate, and the pair names the class", func() Observation {
			o := pair()
			gold := "gold"
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "gold", Owner: "e1", Bound: true, StorageClass: &gold})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/StorageClassUnmapped")
			expect(t, d.Unmapped, map[string]string{"ns/gold": "target " + dest + " has no storage class gold"})
			expect(t, volumeCondition(d, "ns/gold"), "False/StorageClassUnmapped: the volume cannot replicate: target "+dest+" has no storage class gold")
			expect(t, volumeCondition(d, "ns/c"), "False/NoReplica: no replica on "+dest+" yet")
		}},
		{"Locations that share a target neither replicate nor switch", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", lost(10*time.Minute))
			west := o.Locations["west"]
			west.Targets = append(slices.Clone(west.Targets), o.Locations["east"].Targets[0])
			o.Locations["west"] = west
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairPending)
			expect(t, d.Action == nil, true)
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "Unknown/LocationsOverlap")
		}},
		{"a volume not yet bound does not replicate", func() Observation {
			o := pair()
			o.Volumes[0].Bound = false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, len(d.Replications), 0)
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/NoVolumes")
		}},
		{"a ready image newer than the record is recorded, and the volume is protected", func() Observation {
			o := replicating(pair(), 10*time.Minute)
			o.Volumes[0].Replication.Image = replica(dest, time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replicas, map[string]storagev1alpha1.Replica{"ns/c": *replica(dest, time.Minute)})
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "True/Replicated")
			expect(t, d.OldestLastSync, ago(time.Minute))
			expect(t, d.Protected, int32(1))
			expect(t, volumeCondition(d, "ns/c"), "True/Replicated: latest replica snap-"+dest+" on "+dest+", from 2026-01-01T11:59:00Z")
		}},
		{"an image that is not ready yet is not recorded", func() Observation {
			o := replicating(pair(), 10*time.Minute)
			o.Volumes[0].Replication.Image, o.Volumes[0].Replication.ImageReady = replica(dest, time.Minute), false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, len(d.Replicas), 0)
		}},
		{"a replica older than two intervals lags", func() Observation { return replicating(pair(), 11*time.Minute) }, func(t *testing.T, d Decision) {
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/ReplicationLagging")
			expect(t, volumeCondition(d, "ns/c"), "False/ReplicationLagging: the latest replica, snap-"+dest+" on "+dest+", is from 2026-01-01T11:49:00Z: older than two intervals (10m0s)")
			expect(t, d.OldestLastSync, ago(11*time.Minute))
		}},
		{"a failed sync shows", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Volumes[0].Replication.Failed, o.Volumes[0].Replication.Message = true, "connection refused"
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/SyncFailed")
			expect(t, volumeCondition(d, "ns/c"), "False/SyncFailed: the last sync from e1 to "+dest+" failed, and is retried: connection refused")
		}},
		{"replication follows a volume that moved inside the active Location, and takes no image of the old source", func() Observation {
			o := replicating(pair(), 10*time.Minute)
			o.Volumes[0].Owner = "e2"
			o.Volumes[0].Replication.Image = replica(dest, time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e2", Destination: dest}})
			expect(t, len(d.Replicas), 0)
		}},
		{"an active Location unreachable for less than the threshold does not fail over", func() Observation {
			return with(replicating(pair(), time.Minute), "east", lost(30*time.Second))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action == nil, true)
			expect(t, condition(d, schedulingv1alpha1.ConditionAvailable), "False/LocationUnavailable")
		}},
		{"a lost active Location fails over on its own, straight to restoring as nothing answers to fence", func() Observation {
			return with(replicating(pair(), time.Minute), "east", lost(2*time.Minute))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, true)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "west")
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
			c := meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing)
			expect(t, c.Message, "east is lost, but west has no replica of ns/c: a failover on its own starts no workload away from its data; declare one (kubectl custody failover) to go anyway")
		}},
		{"a pair failed over, lost before it replicated back, does not fail over again on its own", func() Observation {
			// east reported clean since the failover, and its Fences were lifted.
			o := with(failedOver(), "east", func(t *Target) { t.Fence, t.Reported = fencing.Unfenced, now })
			return with(o, "west", lost(2*time.Minute))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Active, "west")
			expect(t, d.Action.From, "east")
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Restores == nil, true)
			expect(t, len(d.Fence), 0)
		}},
		{"a declared failover goes to a Location with no replica", func() Observation {
			o := with(pair(), "east", lost(2*time.Minute))
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, false)
			expect(t, d.Active, "west")
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
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
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
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
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
			expect(t, d.Active, "west")
		}},
		{"once fenced, the other Location becomes active and restores", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "west")
			expect(t, d.Phase, schedulingv1alpha1.PairFailingOver)
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-" + dest})
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
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
				"failover east to west: waiting for 1 destinations to keep their latest images from VolSync's rotation, the first ns/c on "+dest)
		}},
		{"a failover restores from a ready image newer than the recorded replica, and records it", func() Observation {
			o := with(replicating(pair(), 4*time.Minute), "east", lost(2*time.Minute))
			newer := &storagev1alpha1.Replica{Target: dest, Snapshot: "snap-newer", Time: metav1.NewTime(ago(30 * time.Second))}
			o.Volumes[0].Replication.Image = newer
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing, time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-newer"})
			expect(t, d.Replicas["ns/c"].Snapshot, "snap-newer")
		}},
		{"restoring asks each claim of the Location left to restore from its replica, or says it has none, once", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			asked := dest + "/snap-" + dest
			o.Volumes[0].Restore = &asked
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "no-replica", Owner: "e2", Bound: true},
				Volume{Namespace: "ns", Claim: "new", Owner: "w1"})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores, map[string]string{"ns/no-replica": ""})
		}},
		{"a replica left in the Location a switch leaves is none", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			o.Volumes[0].Replica, o.Volumes[0].Replication = replica("e2", time.Hour), nil
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores, map[string]string{"ns/c": ""})
		}},
		{"restoring completes once every volume with a replica is bound in the new active Location", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			o.Volumes[0].Owner = dest
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "no-replica", Owner: "e2"})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Action.Duration.Duration, 20*time.Second)
			expect(t, d.Action.OldestReplicaTime.Time, ago(time.Minute))
			expect(t, d.Phase, schedulingv1alpha1.PairFailedOver)
			expect(t, d.Fence, []string{"e1", "e2"})
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/PeerFenced")
		}},
		{"a volume with a replica not yet bound in the new active Location keeps restoring", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			o.Volumes[0].Owner, o.Volumes[0].Bound = dest, false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
				"failover east to west: waiting for 1 volumes to be restored and bound in west, the first ns/c")
		}},
		{"the old active Location back and clean is unfenced, and replication runs the other way", func() Observation {
			o := with(failedOver(), "east", func(t *Target) { t.Reported = now }, "e1")
			return with(o, "east", func(t *Target) { t.Reported = ago(6 * time.Minute) }, "e2")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Fence, []string{"e2"})
			expect(t, d.Phase, schedulingv1alpha1.PairFailedOver)
			expect(t, len(d.Replications), 0)
		}},
		{"a target of the old active Location back with a clean report from before it came back stays fenced", func() Observation {
			o := with(failedOver(), "east", func(t *Target) { t.Reported = now }, "e1")
			return with(o, "east", func(t *Target) { t.Reported, t.ReadySince = ago(time.Second), now }, "e2")
		}, func(t *testing.T, d Decision) {
			expect(t, d.Fence, []string{"e2"})
		}},
		{"a pair whose active Location is lost does not fail over to a Location every target of which is still fenced from the failover before", func() Observation {
			return with(failedOver(), "west", lost(2*time.Minute))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Active, "west")
			expect(t, d.Action.From, "east")
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Restores == nil, true)
			expect(t, d.Fence, []string{"e1", "e2"})
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/PeerFenced")
		}},
		{"with the old Location unfenced, volumes replicate back, and the pair protects again once they have replicas", func() Observation {
			return replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: dest, Destination: Destination("ns", []string{"e1", "e2"})}})
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "True/Replicated")
		}},
		{"until the replication back has synced, the replica a failover restored from protects nothing: the pair stays FailedOver and says so", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
			o.Volumes[0].Replication.Image, o.Volumes[0].Replication.ImageReady = nil, false
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairFailedOver)
			expect(t, condition(d, schedulingv1alpha1.ConditionDataProtected), "False/NoReplica")
			expect(t, d.Protected, int32(0))
		}},
		{"a relocate protects again with the first reverse replica, taken as it completed: the replica's time, to the second, may read a second before", func() Observation {
			return replicatingBack(schedulingv1alpha1.Relocate, 10*time.Second, 5*time.Second, 8*time.Second, 6*time.Second)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
		}},
		{"a volume replicates to a target of the other Location that is not cordoned: a switch restores it where its replica is", func() Observation {
			return with(pair(), "west", func(t *Target) { t.Cordoned = true }, dest)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: otherDest}})
		}},
		{"a member of the other Location fenced takes no replica: its volumes replicate to another target, and the rest of the Location stays protected", func() Observation {
			return with(replicating(pair(), time.Minute), "west", fenceState(fencing.Fenced), dest)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: otherDest}})
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/PeerFenced")
		}},
		{"a fenced member takes no replica even when every other target is cordoned", func() Observation {
			o := with(pair(), "west", func(t *Target) { t.Cordoned = true })
			return with(o, "west", fenceState(fencing.Failed), dest)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: otherDest}})
		}},
		{"after a failover, each target of the old Location takes replicas once it is unfenced, and the pair protects once every volume has one, while the others are still fenced", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
			return with(o, "east", fenceState(fencing.Fenced), otherThan(o.Volumes[0].Replication.Destination, "e1", "e2"))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: dest, Destination: Destination("ns", []string{"e1", "e2"})}})
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/PeerFenced")
		}},
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
			o := replicating(pair(), time.Minute)
			o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Replications[0].ManualTrigger, stopTrigger(d.Action))
			expect(t, d.Quiesce, true)
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
				"relocate east to west: waiting for the sync that ends the schedule of 1 volumes, the first ns/c")
		}},
		{"the sync that ended the schedule counts once its destination reported it", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart, r.SourceLastSync = stopTrigger(o.Action), ago(10*time.Second), ago(9*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
				"relocate east to west: waiting for the sync that ends the schedule of 1 volumes, the first ns/c")
		}},
		{"a relocate asks for its last sync no sooner than the gap after the sync that ended the schedule", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSync, r.DestinationLastSync = stopTrigger(o.Action), ago(2*time.Second), ago(1500*time.Millisecond)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Replications[0].ManualTrigger, stopTrigger(d.Action))
			expect(t, d.Recheck, 1500*time.Millisecond)
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
				"relocate east to west: waiting for 3s after the sync that ended the schedule of every volume, before the last sync")
		}},
		{"a member's time ahead of the hub's does not hold a relocate longer than the gap", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSync, r.DestinationLastSync = stopTrigger(o.Action), ago(-time.Hour), ago(-time.Hour)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionQuiescing)
			expect(t, d.Recheck, syncGap)
		}},
		{"a relocate whose workloads stopped, and whose schedule ended the gap ago, asks for a last sync", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action, o.Quiesced = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second), true
			o.Volumes[0].Replication.LastManualSync = stopTrigger(o.Action)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFinalSync)
			expect(t, d.Replications[0].ManualTrigger, trigger(d.Action))
			expect(t, d.Active, "east")
			expect(t, condition(d, schedulingv1alpha1.ConditionProgressing), "True/FinalSync")
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
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
		{"a failover back whose replicas are all in the Location it leaves completes, its claims told they have none", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Volumes[0].Owner, o.Volumes[0].Replication = dest, nil
			o.Active, o.Action = "east", &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "west", To: "east",
				Generation: 2, Progression: schedulingv1alpha1.ProgressionRestoring, StartTime: metav1.NewTime(ago(time.Second))}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Restores, map[string]string{"ns/c": ""})
		}},
		{"a claim back where a switch goes, and one bound where its restore went, lose their restore annotation", func() Observation {
			o := replicating(pair(), time.Minute)
			none, asked := "", dest+"/snap-"+dest
			o.Volumes[0].Restore = &asked
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "waited", Owner: "e2", Restore: &none})
			o.Active, o.Action = "east", &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "west", To: "east",
				Generation: 2, Progression: schedulingv1alpha1.ProgressionRestoring, StartTime: metav1.NewTime(ago(time.Second))}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Unrestores, []string{"ns/c", "ns/waited"})
		}},
		{"a relocate says which volume is still in use", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, 5*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing).Message,
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
		{"a relocate's ready last sync is recorded and the other Location becomes active", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionFinalSync, 5*time.Second)
			r := o.Volumes[0].Replication
			r.LastManualSync, r.SourceLastSyncStart, r.DestinationLastSync = trigger(o.Action), ago(2*time.Second), ago(time.Second)
			r.Image = replica(dest, 2*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Active, "west")
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
			expect(t, d.Active, "west")
			expect(t, d.Quiesce, false)
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
			c := meta.FindStatusCondition(d.Conditions, schedulingv1alpha1.ConditionProgressing)
			expect(t, c.Message, "relocate east to west: waiting for a target of east to answer; the relocate becomes a failover once east is lost for the threshold with automatic failover on, or when spec.switchMode asks for a failover")
		}},
		{"a relocate that waits becomes a failover when the spec asks for one, fencing first", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Action = action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing, time.Minute)
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Failover)
			expect(t, d.Action.Automatic, false)
			expect(t, d.Action.Generation, int64(2))
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionFencing)
			expect(t, d.Fence, []string{"e1", "e2"})
			expect(t, d.Quiesce, true)
		}},
		{"a restore asked is not changed midway, whatever the record says", func() Observation {
			o := replicating(pair(), 10*time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			asked := dest + "/snap-final"
			o.Volumes[0].Restore = &asked
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, len(d.Restores), 0)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
		}},
		{"a claim not yet asked to restore in a failover's later step takes the newest replica", func() Observation {
			o := replicating(pair(), 10*time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			o.Volumes[0].Replication.Image = &storagev1alpha1.Replica{Target: dest, Snapshot: "snap-newer", Time: metav1.NewTime(ago(time.Minute))}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-newer"})
			expect(t, d.Replicas["ns/c"].Snapshot, "snap-newer")
		}},
		{"a relocate that restores already is not turned into a failover", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, time.Minute)
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = "west", schedulingv1alpha1.Failover, 2
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, schedulingv1alpha1.Relocate)
		}},
		{"an activeLocation declared before the last action does not switch again", func() Observation {
			o := pair()
			o.Pair.Declared, o.Pair.Generation = "east", 3
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionCompleted, time.Hour)
			o.Action.Generation, o.Action.Automatic = 3, true
			done := metav1.NewTime(ago(50 * time.Minute))
			o.Action.CompletionTime = &done
			o.Volumes[0].Owner = dest
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Active, "west")
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
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
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t, Decide(c.o())) })
	}
}

// volumeCondition is the Replicated condition the decision gives the volume, as
// "<status>/<reason>: <message>".
func volumeCondition(d Decision, k string) string {
	c, ok := d.VolumeConditions[k]
	if !ok {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

func expect[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDecideRechecksWhenTheActiveLocationWouldBeLostOrAReplicaLag(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Observation
		want time.Duration
	}{
		{"every target Unreachable, the last for 20s of the 1m threshold", with(with(pair(), "east", lost(50*time.Second), "e1"), "east", lost(20*time.Second), "e2"), 40 * time.Second},
		{"one target still answers", with(pair(), "east", lost(50*time.Second), "e1"), 0},
		{"every target Unreachable for 2m, but west answers again only since 10s: the threshold counts from then", with(with(pair(), "east", lost(2*time.Minute)), "west", readySince(10*time.Second)), 50 * time.Second},
		{"west answers nowhere", with(with(pair(), "east", lost(50*time.Second)), "west", lost(time.Second)), 0},
		{"every target answers", pair(), 0},
		{"lost already: the failover starts now; the replica turns two 5m intervals old in 9m", with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), 9 * time.Minute},
		{"a replica 1m old turns two 5m intervals old first", replicating(pair(), time.Minute), 9 * time.Minute},
		{"the Location is lost before the replica lags", with(replicating(pair(), time.Minute), "east", lost(50*time.Second)), 10 * time.Second},
		{"a lagging replica already shows", replicating(pair(), 11*time.Minute), 0},
		{"automatic failover off", func() Observation {
			o := with(pair(), "east", lost(20*time.Second))
			o.Pair.Automatic = false
			return o
		}(), 0},
	} {
		if got := Decide(tc.o).Recheck; got != tc.want {
			t.Errorf("%s: recheck in %s, want %s", tc.name, got, tc.want)
		}
	}
}
