package fencing

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// A NetworkFence cuts off the node CIDRs of a target's spec.fencing, and nothing else: what
// it fences is only as good as those CIDRs. The storage knows better which of its clients a
// member is, and csi-addons asks it (the driver's GetFenceClients, for each NetworkFenceClass;
// the answers go to CSIAddonsNode.status.networkFenceClientStatus). VerifyNodeCIDRs compares
// the two, as Ramen's DRCluster does (InvalidCIDRsDetected, UndetectedCIDRsFound): a node CIDR
// that matches no client fences nothing the storage knows of, and a client that no node CIDR
// covers keeps writing through a Fence that says it holds.

// FenceClient is one client the storage reports of a member: its id and its addresses.
type FenceClient struct {
	ID    string
	CIDRs []string
}

// UncoveredClient is a client address that no node CIDR covers whole.
type UncoveredClient struct {
	ID, CIDR string
}

// Verification is how a target's node CIDRs compare with the clients the storage reports
// of its member.
type Verification struct {
	// Unmatched are the node CIDRs that share no address with any client, in their order.
	Unmatched []string
	// Uncovered are the client addresses that the node CIDRs together do not cover whole,
	// sorted by client id, then address.
	Uncovered []UncoveredClient
}

// Verified tells whether the node CIDRs fence exactly the member's clients, as far as CIDRs
// can tell.
func (v Verification) Verified() bool { return len(v.Unmatched) == 0 && len(v.Uncovered) == 0 }

// Reason is the FencingVerified reason: an uncovered client first, as a Fence that misses a
// client lets it write on.
func (v Verification) Reason() string {
	switch {
	case len(v.Uncovered) > 0:
		return workloadv1alpha1.ReasonUncoveredClients
	case len(v.Unmatched) > 0:
		return workloadv1alpha1.ReasonUnmatchedNodeCIDRs
	}
	return workloadv1alpha1.ReasonNodeCIDRsMatchClients
}

// String says what is wrong, naming every CIDR and client; "" when nothing is.
func (v Verification) String() string {
	var said []string
	if len(v.Uncovered) > 0 {
		clients := make([]string, 0, len(v.Uncovered))
		for _, c := range v.Uncovered {
			clients = append(clients, fmt.Sprintf("%s (client %s)", c.CIDR, c.ID))
		}
		said = append(said, "the storage reports clients of the member that no node CIDR covers: "+strings.Join(clients, ", "))
	}
	if len(v.Unmatched) > 0 {
		said = append(said, "node CIDRs match no client the storage reports of the member: "+strings.Join(v.Unmatched, ", "))
	}
	return strings.Join(said, "; ")
}

// VerifyNodeCIDRs compares a target's node CIDRs with the clients the storage reports of its
// member. A node CIDR matches a client when they share an address; a client address is
// covered when the node CIDRs together hold every address of it, as a Fence then cuts all of
// it off. Host bits are ignored, as the storage masks them; a bare address is a CIDR of that
// one address. A client address that does not parse cannot be told covered, so it is
// uncovered; a node CIDR that does not parse (the CRD refuses them) is passed over.
func VerifyNodeCIDRs(nodeCIDRs []string, clients []FenceClient) Verification {
	var nodes []netip.Prefix
	for _, c := range nodeCIDRs {
		if p, ok := parseCIDR(c); ok {
			nodes = append(nodes, p)
		}
	}
	var v Verification
	var addresses []netip.Prefix
	for _, c := range clients {
		for _, a := range c.CIDRs {
			p, ok := parseCIDR(a)
			if ok {
				addresses = append(addresses, p)
			}
			if !ok || !covered(p, nodes) {
				v.Uncovered = append(v.Uncovered, UncoveredClient{ID: c.ID, CIDR: a})
			}
		}
	}
	for _, c := range nodeCIDRs {
		p, ok := parseCIDR(c)
		if ok && !slices.ContainsFunc(addresses, p.Overlaps) {
			v.Unmatched = append(v.Unmatched, c)
		}
	}
	slices.SortFunc(v.Uncovered, func(a, b UncoveredClient) int {
		return strings.Compare(a.ID+"\x00"+a.CIDR, b.ID+"\x00"+b.CIDR)
	})
	v.Uncovered = slices.Compact(v.Uncovered)
	return v
}

// parseCIDR parses a CIDR or a bare address, masked.
func parseCIDR(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

// covered tells whether the prefixes together hold every address of p: one holds it whole,
// or both its halves are covered. Only halves that some prefix lies strictly within are
// split further, so the recursion ends within the address length.
func covered(p netip.Prefix, by []netip.Prefix) bool {
	inner := false
	for _, b := range by {
		switch {
		case b.Bits() <= p.Bits() && b.Contains(p.Addr()):
			return true
		case b.Bits() > p.Bits() && p.Contains(b.Addr()):
			inner = true
		}
	}
	if !inner {
		return false
	}
	lo, hi := halves(p)
	return covered(lo, by) && covered(hi, by)
}

// halves splits p, which is not a single address, into its two halves.
func halves(p netip.Prefix) (netip.Prefix, netip.Prefix) {
	bits := p.Bits() + 1
	lo := netip.PrefixFrom(p.Addr(), bits)
	b := p.Addr().AsSlice()
	i := p.Bits() / 8
	b[i] |= 0x80 >> (p.Bits() % 8)
	hiAddr, _ := netip.AddrFromSlice(b)
	return lo, netip.PrefixFrom(hiAddr, bits)
}

// Verify checks the target's node CIDRs against the clients its syncer last reported of the
// member's storage; reported is false when the target has no spec.fencing or the storage
// reports no clients for its NetworkFenceClass, and then nothing can be told.
func Verify(t *workloadv1alpha1.SyncTarget) (v Verification, reported bool) {
	f, report := t.Spec.Fencing, t.Status.FenceClients
	if f == nil || report == nil || report.NetworkFenceClassName != f.NetworkFenceClassName {
		return Verification{}, false
	}
	clients := make([]FenceClient, 0, len(report.Clients))
	for _, c := range report.Clients {
		clients = append(clients, FenceClient{ID: c.ID, CIDRs: c.CIDRs})
	}
	return VerifyNodeCIDRs(f.NodeCIDRs, clients), true
}

// Unverified is why automatic fencing of the target waits: the message of a failed
// verification, "" when the node CIDRs match the clients or nothing was reported.
func Unverified(t *workloadv1alpha1.SyncTarget) string {
	if v, ok := Verify(t); ok && !v.Verified() {
		return v.String()
	}
	return ""
}

// VerifiedCondition is the target's FencingVerified condition; only a target with
// spec.fencing has one.
func VerifiedCondition(t *workloadv1alpha1.SyncTarget) (metav1.Condition, bool) {
	if t.Spec.Fencing == nil {
		return metav1.Condition{}, false
	}
	c := metav1.Condition{Type: workloadv1alpha1.ConditionFencingVerified, ObservedGeneration: t.Generation}
	v, reported := Verify(t)
	switch {
	case !reported:
		c.Status, c.Reason = metav1.ConditionUnknown, workloadv1alpha1.ReasonFenceClientsUnreported
		c.Message = "the member's storage reports no clients for NetworkFenceClass " + t.Spec.Fencing.NetworkFenceClassName + " to check the node CIDRs against"
	case v.Verified():
		c.Status, c.Reason = metav1.ConditionTrue, v.Reason()
		c.Message = "every node CIDR matches a client the member's storage reports, and covers it"
	default:
		c.Status, c.Reason = metav1.ConditionFalse, v.Reason()
		c.Message = v.String() + "; automatic failover of the target's volumes waits until spec.fencing is corrected or the member is fenced by hand (kubectl custody fence " + t.Name + " --powered-off)"
	}
	return c, true
}
