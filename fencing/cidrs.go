package fencing

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// NodeCIDRs is one target's fencing as the overlap check reads it: its storage domains and
// the node CIDRs a Fence of it cuts off, parsed once (NewNodeCIDRs) for the checks against
// every other target.
type NodeCIDRs struct {
	Target  string
	Domains []string
	CIDRs   []string
	// prefixes are CIDRs parsed and masked, as the storage masks host bits; one that does
	// not parse is the zero Prefix, which overlaps none.
	prefixes []netip.Prefix
}

// NewNodeCIDRs parses a target's node CIDRs for Overlaps.
func NewNodeCIDRs(target string, domains, cidrs []string) NodeCIDRs {
	n := NodeCIDRs{Target: target, Domains: domains, CIDRs: cidrs, prefixes: make([]netip.Prefix, len(cidrs))}
	for i, c := range cidrs {
		if p, err := netip.ParsePrefix(c); err == nil {
			n.prefixes[i] = p.Masked()
		}
	}
	return n
}

// Overlap is a node CIDR of one target that shares addresses with a node CIDR of another
// target of a storage domain they both reach: a NetworkFence of either, executed in that
// domain, cuts off the other's nodes too.
type Overlap struct {
	Target, CIDR     string
	Other, OtherCIDR string
	// Domain is the first storage domain, by name, that the two targets share.
	Domain string
}

// String names both targets, both CIDRs and the domain, as the condition tells them.
func (o Overlap) String() string {
	return fmt.Sprintf("node CIDR %s of %s overlaps %s of %s in storage domain %s", o.CIDR, o.Target, o.OtherCIDR, o.Other, o.Domain)
}

// Overlaps lists the overlaps of t's node CIDRs with those of every other target in all that
// shares a storage domain with it, sorted by the other target, then by the CIDRs. Entries
// that do not parse as CIDRs (which the CRD refuses) and t itself in all are passed over.
// Each target's CIDRs are parsed once, by NewNodeCIDRs: checking every target of a hub
// against every other compares a million pairs at a thousand targets.
func Overlaps(t NodeCIDRs, all []NodeCIDRs) []Overlap {
	var out []Overlap
	for _, other := range all {
		if other.Target == t.Target {
			continue
		}
		domain := sharedDomain(t.Domains, other.Domains)
		if domain == "" {
			continue
		}
		for i, a := range t.prefixes {
			for j, b := range other.prefixes {
				if a.IsValid() && b.IsValid() && a.Overlaps(b) {
					out = append(out, Overlap{Target: t.Target, CIDR: t.CIDRs[i], Other: other.Target, OtherCIDR: other.CIDRs[j], Domain: domain})
				}
			}
		}
	}
	slices.SortFunc(out, func(x, y Overlap) int {
		return strings.Compare(x.Other+"\x00"+x.CIDR+"\x00"+x.OtherCIDR, y.Other+"\x00"+y.CIDR+"\x00"+y.OtherCIDR)
	})
	return out
}

// sharedDomain is the first domain, by name, in both a and b; "" when there is none.
func sharedDomain(a, b []string) string {
	shared := ""
	for _, d := range a {
		if slices.Contains(b, d) && (shared == "" || d < shared) {
			shared = d
		}
	}
	return shared
}
