package dr

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// returnCases are the return: the claims restored at the Location switched to, the Location
// left fenced until it returns clean, the replication back, and a switch back.
func returnCases() []decideCase {
	return []decideCase{
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
		{"the Location switched to becomes active once every claim is seen asked to restore, and its namespaces go there", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			o.Action = action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, time.Second)
			asked, none := dest+"/snap-"+dest, ""
			o.Volumes[0].Restore = &asked
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "no-replica", Owner: "e2", Bound: true, Restore: &none})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Active, "west")
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, d.Restores == nil, true)
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
			// Restored on dest from the replica it was asked to restore from.
			asked := dest + "/snap-" + dest
			o.Volumes[0].Owner, o.Volumes[0].Restore = dest, &asked
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
		{"once every volume is bound in the new active Location, the workloads start there: a status the Location left wrote is cleared, and the switch waits", func() Observation {
			o := restoredOnDest(schedulingv1alpha1.Relocate)
			o.Workloads = []Workload{{Namespace: "ns", Kind: "Deployment", Name: "web", Replicas: 2, Ready: 2, Reported: ago(5 * time.Minute)}}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionStarting)
			expect(t, d.Quiesce, false)
			expect(t, d.Unreported, []string{"ns/Deployment/web"})
			expect(t, d.Action.CompletionTime == nil, true)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"relocate east to west: waiting for 1 workloads to be ready in west, the first ns/Deployment/web, whose status is the Location left's")
		}},
		{"a switch completes once every workload reported its replicas ready since it started at the new active Location", func() Observation {
			o := restoredOnDest(schedulingv1alpha1.Failover)
			started := metav1.NewTime(ago(5 * time.Second))
			o.Action.Progression, o.Action.ProgressionTime = schedulingv1alpha1.ProgressionStarting, &started
			o.Workloads = []Workload{{Namespace: "ns", Kind: "Deployment", Name: "web", Replicas: 2, Ready: 2, Reported: ago(time.Second)},
				{Namespace: "ns", Kind: "StatefulSet", Name: "db", Replicas: 0, Reported: started.Time}}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Action.Duration.Duration, 20*time.Second)
			expect(t, len(d.Unreported), 0)
		}},
		{"a workload not ready yet holds the switch, and says how many replicas are", func() Observation {
			o := restoredOnDest(schedulingv1alpha1.Failover)
			started := metav1.NewTime(ago(5 * time.Second))
			o.Action.Progression, o.Action.ProgressionTime = schedulingv1alpha1.ProgressionStarting, &started
			o.Workloads = []Workload{{Namespace: "ns", Kind: "StatefulSet", Name: "db", Replicas: 3, Ready: 1, Reported: ago(time.Second)}}
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionStarting)
			expect(t, len(d.Unreported), 0)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
				"failover east to west: waiting for 1 workloads to be ready in west, the first ns/StatefulSet/db (1 of 3 replicas ready)")
		}},
		{"a volume with a replica not yet bound in the new active Location keeps restoring", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			// Asked to restore, with dest for owner as the restore goes on.
			asked := dest + "/snap-" + dest
			o.Volumes[0].Owner, o.Volumes[0].Bound, o.Volumes[0].Restore = dest, false, &asked
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionRestoring)
			expect(t, message(d, schedulingv1alpha1.ConditionProgressing),
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
		{"after a failover, each target of the old Location takes replicas once it is unfenced, and the pair protects once every volume has one, while the others are still fenced", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
			return with(o, "east", fenceState(fencing.Fenced), otherThan(o.Volumes[0].Replication.Destination, "e1", "e2"))
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: dest, Destination: Destination("ns", []string{"e1", "e2"})}})
			expect(t, d.Phase, schedulingv1alpha1.PairProtecting)
			expect(t, condition(d, schedulingv1alpha1.ConditionPeerReady), "False/PeerFenced")
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
		{"a switch completed, whose decision was written without its restore annotations, still tells a claim with no replica so", func() Observation {
			// The status that says Completed was written, and the controller stopped before
			// the claims: the claim left in east has no annotation.
			o := failedOver()
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "no-replica", Owner: "e2"})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			expect(t, d.Restores, map[string]string{"ns/no-replica": ""})
			expect(t, len(d.Unrestores), 0)
		}},
		{"a switch completed lets go of the annotation of a claim back where it went with its data, bound or not", func() Observation {
			none := ""
			o := failedOver()
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "waited", Owner: "w2", Restore: &none, Replica: replica("w2", time.Hour)})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores == nil, true)
			expect(t, d.Unrestores, []string{"ns/waited"})
		}},
		{"a relocate to where a claim already lives, with data newer than its replica there, keeps its volume", func() Observation {
			// A failover back to east found no replica: the claim waited in west with its
			// data, newer than the replica west recorded before. A relocate to west restores
			// nothing of it.
			o := replicating(pair(), time.Minute)
			none := ""
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "waited", Owner: "w1", Restore: &none, Replica: replica("w1", time.Hour)})
			o.Active, o.Action = "west", action(schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores, map[string]string{"ns/c": dest + "/snap-" + dest})
			expect(t, d.Unrestores, []string{"ns/waited"})
		}},
		{"a failover to where a claim already lives restores nothing of it, and completes without its replica there", func() Observation {
			o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
			asked := dest + "/snap-" + dest
			o.Volumes[0].Owner, o.Volumes[0].Restore = dest, &asked
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "waited", Owner: "w1", Replica: replica("w1", time.Hour)})
			o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Restores == nil, true)
			expect(t, d.Action.Progression, schedulingv1alpha1.ProgressionCompleted)
			oldest := metav1.NewTime(ago(time.Minute))
			expect(t, d.Action.OldestReplicaTime, &oldest)
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
		switchAfter("after a failover, protected again", protectedBack, schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionFencing),
		switchAfter("after a failover, protected again", protectedBack, schedulingv1alpha1.Relocate, schedulingv1alpha1.ProgressionQuiescing),
	}
}

func TestReturn(t *testing.T) { runCases(t, returnCases()) }

// restoredOnDest is a switch of mode from east to west at Restoring, begun 20s ago, whose
// volume is restored and bound on dest.
func restoredOnDest(mode schedulingv1alpha1.SwitchMode) Observation {
	o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
	o.Active, o.Action = "west", action(mode, schedulingv1alpha1.ProgressionRestoring, 20*time.Second)
	asked := dest + "/snap-" + dest
	o.Volumes[0].Owner, o.Volumes[0].Restore = dest, &asked
	return o
}
