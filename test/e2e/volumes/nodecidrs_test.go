package volumes

import (
	"context"
	"net/netip"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// A Fence cuts off a target's node CIDRs in its storage domain: two targets of a domain whose
// CIDRs overlap would be fenced together.
var _ = Describe("Node CIDRs of two targets of a storage domain", func() {
	It("that overlap are told on both targets, each naming the other, until they are apart again", func(ctx SpecContext) {
		for _, t := range []string{"m1", "m2", "m3"} {
			exclusiveCIDRs(ctx, t, metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsExclusive)
		}
		// Half of m1's node addresses, added to m3's.
		m1 := netip.MustParsePrefix(framework.Member(env.Bed, "m1").NodeCIDRs[0])
		half := netip.PrefixFrom(m1.Addr(), m1.Bits()+1).String()
		t := &workloadv1alpha1.SyncTarget{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: "m3"}, t)).To(Succeed())
		own := t.Spec.Fencing.DeepCopy()
		overlapping := own.DeepCopy()
		overlapping.NodeCIDRs = append(overlapping.NodeCIDRs, half)
		setFencing(ctx, "m3", overlapping)
		DeferCleanup(setFencing, context.Background(), "m3", own)

		said := "node CIDR " + m1.String() + " of m1 overlaps " + half + " of m3 in storage domain " + domain
		Expect(exclusiveCIDRs(ctx, "m1", metav1.ConditionFalse, workloadv1alpha1.ReasonNodeCIDRsOverlap)).To(ContainSubstring(said))
		Expect(exclusiveCIDRs(ctx, "m3", metav1.ConditionFalse, workloadv1alpha1.ReasonNodeCIDRsOverlap)).
			To(ContainSubstring("node CIDR " + half + " of m3 overlaps " + m1.String() + " of m1 in storage domain " + domain))
		exclusiveCIDRs(ctx, "m2", metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsExclusive)

		setFencing(ctx, "m3", own)
		exclusiveCIDRs(ctx, "m1", metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsExclusive)
		exclusiveCIDRs(ctx, "m3", metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsExclusive)
	})
})

// exclusiveCIDRs waits until the target's NodeCIDRsExclusive condition has the status and
// reason, and returns its message.
func exclusiveCIDRs(ctx context.Context, target string, status metav1.ConditionStatus, reason string) string {
	GinkgoHelper()
	var c metav1.Condition
	Eventually(func(g Gomega) {
		c = targetCondition(ctx, g, target, workloadv1alpha1.ConditionNodeCIDRsExclusive)
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason))
	}).WithContext(ctx).Should(Succeed())
	return c.Message
}
