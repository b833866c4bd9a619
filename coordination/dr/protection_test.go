package dr

import (
	"slices"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// protectionCases are a pair that protects: what replicates where, the replicas it records, and
// the DataProtected condition with each volume's Replicated condition.
func protectionCases() []decideCase {
	return []decideCase{
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
		{"a namespace keeps the destination it replicates to while it can take replicas, though another one would be chosen now", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Volumes[0].Replication.Destination = otherDest
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "new", Owner: "e1", Bound: true})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: otherDest}, {Namespace: "ns", Claim: "new", Source: "e1", Destination: otherDest}})
		}},
		{"and takes the chosen one once its destination is fenced", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Volumes[0].Replication.Destination = otherDest
			return with(o, "west", fenceState(fencing.Fenced), otherDest)
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest}})
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
			why := "target " + dest + " has no storage class gold; map it to a class of Location west in the pair's spec.storageClassMap"
			expect(t, d.Unmapped, map[string]string{"ns/gold": why})
			expect(t, volumeCondition(d, "ns/gold"), "False/StorageClassUnmapped: the volume cannot replicate: "+why)
			expect(t, volumeCondition(d, "ns/c"), "False/NoReplica: no replica on "+dest+" yet")
		}},
		{"a volume whose class the pair maps replicates into the class mapped at the destination", func() Observation {
			o := pair()
			o.Pair.Classes = []schedulingv1alpha1.StorageClassMapping{{Primary: "gold", Secondary: "slow"}}
			gold := "gold"
			o.Volumes = append(o.Volumes, Volume{Namespace: "ns", Claim: "gold", Owner: "e1", Bound: true, StorageClass: &gold, NamedClass: &gold})
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, d.Replications, []Want{{Namespace: "ns", Claim: "c", Source: "e1", Destination: dest},
				{Namespace: "ns", Claim: "gold", Source: "e1", Destination: dest, Class: ptr.To("slow")}})
			expect(t, d.Unmapped == nil, true)
		}},
		{"a volume restored into a mapped class replicates back into the class it names", func() Observation {
			o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 9*time.Minute, 11*time.Minute, time.Minute)
			o.Pair.Classes = []schedulingv1alpha1.StorageClassMapping{{Primary: "fast", Secondary: "slow"}}
			o.Volumes[0].StorageClass, o.Volumes[0].NamedClass = ptr.To("slow"), ptr.To("fast")
			o.Volumes[0].Bound = true
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, len(d.Replications), 1)
			expect(t, d.Replications[0].Class, ptr.To("fast"))
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
		{"an image of another target, older than the record, is not recorded", func() Observation {
			o := replicating(pair(), time.Minute)
			o.Volumes[0].Replication.Destination, o.Volumes[0].Replication.Image = otherDest, replica(otherDest, 3*time.Minute)
			return o
		}, func(t *testing.T, d Decision) {
			expect(t, len(d.Replicas), 0)
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
	}
}

func TestProtection(t *testing.T) { runCases(t, protectionCases()) }
