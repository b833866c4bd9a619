package fencing

import (
	"slices"
	"testing"
)

func TestOverlaps(t *testing.T) {
	m1 := NodeCIDRs{Target: "m1", Domains: []string{"east", "shared"}, CIDRs: []string{"10.0.0.0/16", "fd00::/64"}}
	for _, tt := range []struct {
		name   string
		others []NodeCIDRs
		want   []string
	}{
		{name: "no other target", want: nil},
		{name: "apart, same domain", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.1.0.0/16"}}}},
		{name: "adjacent, same domain", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.1.0.0/24", "9.255.255.0/24"}}}},
		{name: "inside, same domain", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.0.3.0/24"}}},
			want: []string{"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.3.0/24 of m2 in storage domain shared"}},
		{name: "around, same domain", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.0.0.0/8"}}},
			want: []string{"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.0.0/8 of m2 in storage domain shared"}},
		{name: "overlapping, but no shared domain", others: []NodeCIDRs{{Target: "m2", Domains: []string{"west"}, CIDRs: []string{"10.0.0.0/16"}}}},
		{name: "overlapping, target without domains", others: []NodeCIDRs{{Target: "m2", CIDRs: []string{"10.0.0.0/16"}}}},
		{name: "the first shared domain by name", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared", "east"}, CIDRs: []string{"10.0.0.7/32"}}},
			want: []string{"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.0.7/32 of m2 in storage domain east"}},
		{name: "host bits set, masked", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.0.200.1/8"}}},
			want: []string{"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.200.1/8 of m2 in storage domain shared"}},
		{name: "IPv6", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"fd00::5/128"}}},
			want: []string{"node CIDR fd00::/64 of m1 overlaps fd00::5/128 of m2 in storage domain shared"}},
		{name: "IPv4 and IPv6 never overlap", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"::/1"}}}},
		{name: "not a CIDR is passed over", others: []NodeCIDRs{{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"10.0.0.1", "nonsense"}}}},
		{name: "the target itself is passed over", others: []NodeCIDRs{m1}},
		{name: "several, sorted by target then CIDR", others: []NodeCIDRs{
			{Target: "m3", Domains: []string{"shared"}, CIDRs: []string{"10.0.1.0/24"}},
			{Target: "m2", Domains: []string{"shared"}, CIDRs: []string{"fd00::/48", "10.0.2.0/24"}},
		}, want: []string{
			"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.2.0/24 of m2 in storage domain shared",
			"node CIDR fd00::/64 of m1 overlaps fd00::/48 of m2 in storage domain shared",
			"node CIDR 10.0.0.0/16 of m1 overlaps 10.0.1.0/24 of m3 in storage domain shared",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			all := []NodeCIDRs{parsed(m1)}
			for _, o := range tt.others {
				all = append(all, parsed(o))
			}
			for _, o := range Overlaps(parsed(m1), all) {
				got = append(got, o.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Overlaps =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// parsed is n as NewNodeCIDRs makes it.
func parsed(n NodeCIDRs) NodeCIDRs { return NewNodeCIDRs(n.Target, n.Domains, n.CIDRs) }
