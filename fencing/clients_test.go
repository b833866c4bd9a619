package fencing

import (
	"reflect"
	"testing"
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
			clients: []FenceClient{client("m1", "10.0.1.7/32", "10.0.2.0/24"), client("m1-v6", "fd00::5/128")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "the same CIDR both ways", nodes: []string{"10.0.0.0/24"}, clients: []FenceClient{client("m1", "10.0.0.0/24")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "a bare address is one address", nodes: []string{"10.0.0.0/24"}, clients: []FenceClient{client("m1", "10.0.0.9")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "host bits are masked", nodes: []string{"10.0.0.77/24"}, clients: []FenceClient{client("m1", "10.0.0.9/32")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "a client covered by two node CIDRs together", nodes: []string{"10.0.0.0/24", "10.0.1.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.0/23")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "a node CIDR that matches no client", nodes: []string{"10.0.0.0/24", "10.9.0.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.5/32")}, unmatched: []string{"10.9.0.0/24"}, reason: ReasonUnmatchedNodeCIDRs},
		{name: "a mistyped node CIDR: it matches nothing and the client is not covered", nodes: []string{"10.0.10.0/24"},
			clients: []FenceClient{client("m1", "10.0.1.5/32")}, unmatched: []string{"10.0.10.0/24"},
			uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.1.5/32"}}, reason: ReasonUncoveredClients},
		{name: "a client only partly covered", nodes: []string{"10.0.0.0/25"},
			clients: []FenceClient{client("m1", "10.0.0.0/24")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.0/24"}}, reason: ReasonUncoveredClients},
		{name: "a client half covered by two node CIDRs", nodes: []string{"10.0.0.0/24", "10.0.2.0/24"},
			clients: []FenceClient{client("m1", "10.0.0.0/23")}, unmatched: []string{"10.0.2.0/24"},
			uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.0/23"}}, reason: ReasonUncoveredClients},
		{name: "IPv4 covers no IPv6 client", nodes: []string{"10.0.0.0/8"},
			clients: []FenceClient{client("m1", "10.0.0.1/32", "fd00::1/128")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "fd00::1/128"}}, reason: ReasonUncoveredClients},
		{name: "a client address that does not parse is not covered", nodes: []string{"10.0.0.0/8"},
			clients: []FenceClient{client("m1", "10.0.0.1/32", "nonsense")}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "nonsense"}}, reason: ReasonUncoveredClients},
		{name: "a node CIDR that does not parse is passed over", nodes: []string{"10.0.0.0/8", "nonsense"},
			clients: []FenceClient{client("m1", "10.0.0.1/32")}, reason: ReasonNodeCIDRsMatchClients},
		{name: "no clients: every node CIDR unmatched", nodes: []string{"10.0.0.0/24", "10.1.0.0/24"},
			unmatched: []string{"10.0.0.0/24", "10.1.0.0/24"}, reason: ReasonUnmatchedNodeCIDRs},
		{name: "no node CIDRs: every client uncovered, sorted by id then address",
			clients:   []FenceClient{client("b", "10.0.0.2/32"), client("a", "10.0.0.3/32", "10.0.0.1/32")},
			uncovered: []UncoveredClient{{ID: "a", CIDR: "10.0.0.1/32"}, {ID: "a", CIDR: "10.0.0.3/32"}, {ID: "b", CIDR: "10.0.0.2/32"}}, reason: ReasonUncoveredClients},
		{name: "a client reported twice is named once", nodes: []string{"10.1.0.0/16"},
			clients:   []FenceClient{client("m1", "10.0.0.1/32"), client("m1", "10.0.0.1/32")},
			unmatched: []string{"10.1.0.0/16"}, uncovered: []UncoveredClient{{ID: "m1", CIDR: "10.0.0.1/32"}}, reason: ReasonUncoveredClients},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := VerifyNodeCIDRs(tt.nodes, tt.clients)
			if !reflect.DeepEqual(v.Unmatched, tt.unmatched) || !reflect.DeepEqual(v.Uncovered, tt.uncovered) {
				t.Errorf("VerifyNodeCIDRs = %+v; want unmatched %q, uncovered %+v", v, tt.unmatched, tt.uncovered)
			}
			if v.Reason() != tt.reason {
				t.Errorf("Reason = %s, want %s", v.Reason(), tt.reason)
			}
			if v.Verified() != (tt.reason == ReasonNodeCIDRsMatchClients) || v.Verified() != (v.String() == "") {
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
