package fencing

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestVerifyNodeCIDRs(t *testing.T) {
	client := func(id string, cidrs ...string) FenceClient { return FenceClient{ID: id, CIDRs: cidrs} }
	for _, tt := range []struct {
		name      string
		nodes     []string
		clients   []FenceClient
		unmatched []string
		uncovered []UncoveredClient
		reason    string
	}{
		{name: "each client within a node CIDR, each node CIDR matching one", nodes: []string{"10.0.0.0/16", "fd00::/64"},
			clients: []FenceClient{client("m1", "10.0.1.7/32", "10.0.2.0/24"), client("m1-v6", "fd00::5/128")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "the same CIDR both ways", nodes: []string{"10.0.0.0/24"}, clients: []FenceClient{client("m1", "10.0.0.0/24")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "a bare address is one address", nodes: []string{"10.0.0.0/24"}, clients: []FenceClient{client("m1", "10.0.0.9")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "host bits are masked", nodes: []string{"10.0.0.77/24"}, clients: []FenceClient{client("m1", "10.0.0.9/32")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "a client covered by two node CIDRs together", nodes: []string{"10.0.0.0/24", "10.0.1.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.0/23")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "a node CIDR that matches no client", nodes: []string{"10.0.0.0/24", "10.9.0.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.5/32")}, unmatched: []string{"10.9.0.0/24"}, reason: workloadv1alpha1.ReasonUnmatchedNodeCIDRs},
		{name: "a mistyped node CIDR: it matches nothing and the client is not covered", nodes: []string{"10.0.10.0/24"},
			clients: []FenceClient{client("m1", "10.0.1.5/32")}, unmatched: []string{"10.0.10.0/24"},
			uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.1.5/32"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "a client only partly covered", nodes: []string{"10.0.0.0/25"},
			clients: []FenceClient{client("m1", "10.0.0.0/24")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.0/24"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "a client half covered by two node CIDRs", nodes: []string{"10.0.0.0/24", "10.0.2.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.0/23")}, unmatched: []string{"10.0.2.0/24"},
			uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.0/23"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "IPv4 covers no IPv6 client", nodes: []string{"10.0.0.0/8"},
			clients: []FenceClient{client("m1", "10.0.0.1/32", "fd00::1/128")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "fd00::1/128"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "a client address that does not parse is not covered", nodes: []string{"10.0.0.0/8"},
			clients: []FenceClient{client("m1", "10.0.0.1/32", "nonsense")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "nonsense"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "a node CIDR that does not parse is passed over", nodes: []string{"10.0.0.0/8", "nonsense"},
			clients: []FenceClient{client("m1", "10.0.0.1/32")}, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "no clients: every node CIDR unmatched", nodes: []string{"10.0.0.0/24", "10.1.0.0/24"},
			unmatched: []string{"10.0.0.0/24", "10.1.0.0/24"}, reason: workloadv1alpha1.ReasonUnmatchedNodeCIDRs},
		{name: "no node CIDRs: every client uncovered, sorted by id then address",
			clients:   []FenceClient{client("b", "10.0.0.2/32"), client("a", "10.0.0.3/32", "10.0.0.1/32")},
			uncovered: []UncoveredClient{{ID: "a", CIDR: "10.0.0.1/32"}, {ID: "a", CIDR: "10.0.0.3/32"}, {ID: "b", CIDR: "10.0.0.2/32"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
		{name: "a client reported twice is named once", nodes: []string{"10.1.0.0/16"},
			clients:   []FenceClient{client("m1", "10.0.0.1/32"), client("m1", "10.0.0.1/32")},
			unmatched: []string{"10.1.0.0/16"}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.1/32"}}, reason: workloadv1alpha1.ReasonUncoveredClients},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := VerifyNodeCIDRs(tt.nodes, tt.clients)
			if !reflect.DeepEqual(v.Unmatched, tt.unmatched) || !reflect.DeepEqual(v.Uncovered, tt.uncovered) {
				t.Errorf("VerifyNodeCIDRs = %+v; want unmatched %q, uncovered %+v", v, tt.unmatched, tt.uncovered)
			}
			if v.Reason() != tt.reason {
				t.Errorf("Reason = %s, want %s", v.Reason(), tt.reason)
			}
			if v.Verified() != (tt.reason == workloadv1alpha1.ReasonNodeCIDRsMatchClients) || v.Verified() != (v.String() == "") {
				t.Errorf("Verified = %v, String = %q", v.Verified(), v.String())
			}
		})
	}
}

func TestVerificationString(t *testing.T) {
	v := VerifyNodeCIDRs([]string{"10.9.0.0/24"}, []FenceClient{{ID: "m1", CIDRs: []string{"10.0.0.1/32"}}})
	const want = "the storage reports clients of the member that no node CIDR covers: 10.0.0.1/32 (client m1); " +
		"node CIDRs match no client the storage reports of the member: 10.9.0.0/24"
	if v.String() != want {
		t.Errorf("String =\n%s\nwant\n%s", v.String(), want)
	}
}

func TestVerifiedCondition(t *testing.T) {
	target := func(fencing *workloadv1alpha1.FencingSpec, report *workloadv1alpha1.FenceClientsReport) *workloadv1alpha1.SyncTarget {
		return &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "m1", Generation: 3},
			Spec:   workloadv1alpha1.SyncTargetSpec{Fencing: fencing},
			Status: workloadv1alpha1.SyncTargetStatus{FenceClients: report}}
	}
	spec := &workloadv1alpha1.FencingSpec{NodeCIDRs: []string{"10.0.1.0/24"}, NetworkFenceClassName: "shared"}
	report := func(class string, cidrs ...string) *workloadv1alpha1.FenceClientsReport {
		return &workloadv1alpha1.FenceClientsReport{NetworkFenceClassName: class, Clients: []workloadv1alpha1.FenceClient{{ID: "m1", CIDRs: cidrs}}}
	}
	for _, tt := range []struct {
		name       string
		t          *workloadv1alpha1.SyncTarget
		has        bool
		status     metav1.ConditionStatus
		reason     string
		unverified bool
	}{
		{name: "no spec.fencing: no condition", t: target(nil, report("shared", "10.0.1.5/32"))},
		{name: "nothing reported: Unknown, nothing waits", t: target(spec, nil), has: true, status: metav1.ConditionUnknown, reason: workloadv1alpha1.ReasonFenceClientsUnreported},
		{name: "a report of another class: Unknown", t: target(spec, report("other", "10.0.9.5/32")), has: true, status: metav1.ConditionUnknown, reason: workloadv1alpha1.ReasonFenceClientsUnreported},
		{name: "matching: True", t: target(spec, report("shared", "10.0.1.5/32")), has: true, status: metav1.ConditionTrue, reason: workloadv1alpha1.ReasonNodeCIDRsMatchClients},
		{name: "a client outside: False", t: target(spec, report("shared", "10.0.1.5/32", "10.0.2.5/32")), has: true, status: metav1.ConditionFalse,
			reason: workloadv1alpha1.ReasonUncoveredClients, unverified: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, has := VerifiedCondition(tt.t)
			if has != tt.has || c.Status != tt.status || c.Reason != tt.reason {
				t.Fatalf("VerifiedCondition = %+v, %v; want %s %s, %v", c, has, tt.status, tt.reason, tt.has)
			}
			if has && c.ObservedGeneration != 3 {
				t.Errorf("observedGeneration %d, want 3", c.ObservedGeneration)
			}
			if got := Unverified(tt.t) != ""; got != tt.unverified {
				t.Errorf("Unverified = %q", Unverified(tt.t))
			}
		})
	}
}
