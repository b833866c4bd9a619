package scheduler

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// ok is a target that passes every filter.
func ok(name string, priority int32, load int) Candidate {
	return Candidate{Name: name, Key: name, Usable: true, Ready: true, Priority: priority, Load: load, Domains: []string{"a"}}
}

func with(c Candidate, f func(*Candidate)) Candidate { f(&c); return c }

func TestSchedule(t *testing.T) {
	tests := []struct {
		name        string
		req         Request
		wantKey     string
		wantReason  string
		wantRecheck time.Duration
	}{
		{name: "no targets", req: Request{}, wantReason: schedulingv1alpha1.ReasonNoEligibleTarget},
		{name: "highest score wins", req: Request{Candidates: []Candidate{ok("a", 1, 3), ok("b", 1, 1), ok("c", 1, 2)}}, wantKey: "b"},
		{name: "priority divides by load plus one", req: Request{Candidates: []Candidate{ok("a", 3, 3), ok("b", 1, 0)}}, wantKey: "b"},
		{name: "priority outweighs load", req: Request{Candidates: []Candidate{ok("a", 10, 3), ok("b", 1, 0)}}, wantKey: "a"},
		{name: "ties break by name", req: Request{Candidates: []Candidate{ok("b", 1, 0), ok("a", 1, 0)}}, wantKey: "a"},
		{name: "not ready is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready = false }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "cordoned is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Unschedulable = true }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "evicting is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Gone = true }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "a target being left takes the namespace back for the replicas it holds", req: Request{Candidates: []Candidate{ok("a", 1, 0), with(ok("b", 1, 5), func(c *Candidate) { c.Leaving, c.Replicas = true, true })}}, wantKey: "b"},
		{name: "a target being left is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Leaving = true }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "storage domains must be reached", req: Request{VolumeDomains: []string{"b"}, Candidates: []Candidate{ok("a", 1, 0), with(ok("b", 1, 5), func(c *Candidate) { c.Domains = []string{"a", "b"} })}}, wantKey: "b"},
		{name: "no target reaches the domain", req: Request{VolumeDomains: []string{"z"}, Candidates: []Candidate{ok("a", 1, 0)}}, wantReason: schedulingv1alpha1.ReasonNoEligibleTarget},
		{name: "unusable (restricted) is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Usable = false }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "only restricted targets", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Usable = false })}}, wantReason: schedulingv1alpha1.ReasonTargetRestricted},
		{name: "stable: current stays although another scores higher", req: Request{Current: "a", Candidates: []Candidate{ok("a", 1, 9), ok("b", 5, 0)}}, wantKey: "a"},
		{name: "current not ready moves", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready = false }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "current not ready and nowhere to go: stays", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready = false })}}, wantKey: "a"},
		{name: "a target being left takes the namespace back when no other can", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Leaving = true }), with(ok("b", 1, 0), func(c *Candidate) { c.Ready = false })}}, wantKey: "a"},
		{name: "a target being left that is not Ready does not take the namespace back", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Leaving, c.Ready = true, false })}}, wantReason: schedulingv1alpha1.ReasonNoEligibleTarget},
		{name: "current cordoned moves when another can take it", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Unschedulable = true }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "fenced is filtered", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Fenced = true }), ok("b", 1, 5)}}, wantKey: "b"},
		{name: "fenced alone takes nothing", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Fenced = true })}}, wantReason: schedulingv1alpha1.ReasonNoEligibleTarget},
		{name: "current fenced moves when another can take it", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Fenced = true }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "current fenced stays when no other can", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Fenced = true }), with(ok("b", 1, 0), func(c *Candidate) { c.Ready = false })}}, wantKey: "a"},
		{name: "current cordoned stays when no other can", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Unschedulable = true }), with(ok("b", 1, 0), func(c *Candidate) { c.Ready = false })}}, wantKey: "a"},
		{name: "current evicting leaves even with nowhere to go", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Gone = true })}}, wantReason: schedulingv1alpha1.ReasonNoEligibleTarget},
		{name: "current no longer usable moves", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Usable = false }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "the target holding the replicas wins over a better score", req: Request{Candidates: []Candidate{ok("a", 5, 0), with(ok("b", 1, 9), func(c *Candidate) { c.Replicas = true })}}, wantKey: "b"},
		{name: "the target holding the replicas is passed over when it cannot take the namespace", req: Request{Candidates: []Candidate{ok("a", 1, 0), with(ok("b", 1, 0), func(c *Candidate) { c.Replicas, c.Ready = true, false })}}, wantKey: "a"},
		{name: "a cordoned target holding the replicas takes the namespace, as a switch restores where its replica is", req: Request{Candidates: []Candidate{ok("a", 1, 0), with(ok("b", 1, 0), func(c *Candidate) { c.Replicas, c.Unschedulable = true, true })}}, wantKey: "b"},
		{name: "current gives the namespace up to the target holding the replicas", req: Request{Current: "a", Candidates: []Candidate{ok("a", 1, 0), with(ok("b", 1, 9), func(c *Candidate) { c.Replicas = true })}}, wantKey: "b"},
		{name: "current unreachable, not yet lost: stays, and is weighed again when lost", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready, c.LostIn = false, 5*time.Second }), ok("b", 1, 9)}}, wantKey: "a", wantRecheck: 5 * time.Second},
		{name: "current unreachable, not yet lost, cordoned: moves", req: Request{Current: "a", Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready, c.LostIn, c.Unschedulable = false, 5*time.Second, true }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "an unreachable target not yet lost takes no new namespace", req: Request{Candidates: []Candidate{with(ok("a", 1, 0), func(c *Candidate) { c.Ready, c.LostIn = false, 5*time.Second }), ok("b", 1, 9)}}, wantKey: "b"},
		{name: "current out of the Location moves", req: Request{Current: "x", Candidates: []Candidate{ok("b", 1, 9)}}, wantKey: "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Schedule(tt.req)
			if got.Key != tt.wantKey {
				t.Fatalf("key = %q, want %q (%s: %s)", got.Key, tt.wantKey, got.Reason, got.Message)
			}
			if tt.wantReason != "" && got.Reason != tt.wantReason {
				t.Fatalf("reason = %q, want %q (%s)", got.Reason, tt.wantReason, got.Message)
			}
			if got.Recheck != tt.wantRecheck {
				t.Fatalf("recheck = %s, want %s (%s)", got.Recheck, tt.wantRecheck, got.Message)
			}
		})
	}
}

func TestPlan(t *testing.T) {
	state, del := workloadv1alpha1.StateLabel, workloadv1alpha1.DeletionAnnotation
	tests := []struct {
		name        string
		labels, ann map[string]string
		desired     []string
		want        Writes
	}{
		{name: "new namespace", desired: []string{"a"}, want: Writes{Add: []string{"a"}}},
		{name: "already there", labels: map[string]string{state("a"): "Sync"}, desired: []string{"a"}, want: Writes{}},
		{name: "move", labels: map[string]string{state("a"): "Sync"}, desired: []string{"b"}, want: Writes{Add: []string{"b"}, Remove: []string{"a"}}},
		{name: "removal already requested", labels: map[string]string{state("a"): "Sync"}, ann: map[string]string{del("a"): "t"}, desired: nil, want: Writes{}},
		{name: "given back while leaving, when chosen", labels: map[string]string{state("a"): "Sync"}, ann: map[string]string{del("a"): "t"}, desired: []string{"a"}, want: Writes{Clear: []string{"a"}}},
		{name: "stale deletion annotation cleared", ann: map[string]string{del("a"): "t"}, desired: []string{"a"}, want: Writes{Add: []string{"a"}, Clear: []string{"a"}}},
		{name: "two Locations", labels: map[string]string{state("a"): "Sync"}, desired: []string{"a", "c"}, want: Writes{Add: []string{"c"}}},
		{name: "unrelated labels ignored", labels: map[string]string{"app": "x"}, desired: nil, want: Writes{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Plan(&metav1.ObjectMeta{Labels: tt.labels, Annotations: tt.ann}, tt.desired); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Plan = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestHoldingDomain: a claim holds its namespace to its volume's domain, unless it is to be
// restored from a replica on a target that does not reach that domain, or a switch left it
// where it was with no replica.
func TestHoldingDomain(t *testing.T) {
	targets := []workloadv1alpha1.SyncTarget{
		{ObjectMeta: metav1.ObjectMeta{Name: "m2"}, Spec: workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"west"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "m4"}, Spec: workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}}},
	}
	claim := func(restore string, asked bool) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{storagev1alpha1.DomainAnnotation: "east"}}}
		if asked {
			c.Annotations[storagev1alpha1.RestoreAnnotation] = restore
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		restore string
		asked   bool
		want    string
	}{
		{"no restore asked", "", false, "east"},
		{"left with no replica", "", true, ""},
		{"restored on a target that does not reach the domain", "m2/image-1", true, ""},
		{"a replica on a target that reaches the domain: a move", "m4/image-1", true, "east"},
		{"a replica on a target the hub does not know", "m9/image-1", true, ""},
	} {
		if got := holdingDomain(claim(tc.restore, tc.asked), targets); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
