package volumes

import (
	"context"
	"net/netip"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
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

// The storage tells which of its clients a member is (csi-addons' GetFenceClients, in the
// member's CSIAddonsNodes); a Fence of node CIDRs that miss one would leave it writing.
var _ = Describe("Node CIDRs checked against the clients the storage reports", func() {
	It("are verified when a target joins; a client outside them makes automatic failover wait, with an event, until an admin corrects them", func(ctx SpecContext) {
		for _, t := range []string{"m1", "m2", "m3"} {
			fencingVerified(ctx, t, metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsMatchClients)
		}
		ns, lost, _ := ownedVolume(ctx)
		// Last of the clean-ups: the next spec finds the target verified again, not still
		// reporting the client this one adds, which would hold its failover.
		DeferCleanup(func(ctx SpecContext) {
			fencingVerified(ctx, lost, metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsMatchClients)
		})
		// A node of the member the SyncTarget does not list: the storage knows it as a client.
		const extra = "10.250.0.7/32"
		nodes := framework.Member(env.Bed, lost).NodeCIDRs
		Expect(storage.ReportFenceClients(ctx, lost, append(slices.Clone(nodes), extra))).To(Succeed())
		DeferCleanup(storage.ReportFenceClients, context.Background(), lost, []string(nil))
		Expect(fencingVerified(ctx, lost, metav1.ConditionFalse, workloadv1alpha1.ReasonUncoveredClients)).
			To(ContainSubstring(extra + " (client " + lost + ")"))
		Eventually(func(g Gomega) []string { return eventReasons(ctx, g, lost) }).WithContext(ctx).Should(ContainElement(workloadv1alpha1.ReasonUncoveredClients))

		By("losing the member: its volume waits, and no Fence is asked for")
		loseMember(ctx, lost, false)
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonFencingUnverified))
			g.Expect(st.Message).To(ContainSubstring(extra))
		})
		Consistently(func() bool {
			return apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}, &storagev1alpha1.Fence{}))
		}).WithContext(ctx).Should(BeTrue(), "a Fence was asked for a target whose node CIDRs miss a client")
		Expect(ownership(ctx, ns, "data").Status.Owner).To(Equal(lost))

		By("correcting the node CIDRs: checked again before the Fence, which goes ahead")
		t := &workloadv1alpha1.SyncTarget{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: lost}, t)).To(Succeed())
		own := t.Spec.Fencing.DeepCopy()
		corrected := own.DeepCopy()
		corrected.NodeCIDRs = append(corrected.NodeCIDRs, extra)
		setFencing(ctx, lost, corrected)
		DeferCleanup(setFencing, context.Background(), lost, own)
		fencingVerified(ctx, lost, metav1.ConditionTrue, workloadv1alpha1.ReasonNodeCIDRsMatchClients)
		failedOver(ctx, ns, lost)
		comesBack(ctx, lost, ns)
	})
})

// fencingVerified waits until the target's FencingVerified condition has the status and
// reason, and returns its message.
func fencingVerified(ctx context.Context, target string, status metav1.ConditionStatus, reason string) string {
	GinkgoHelper()
	return conditionIs(ctx, target, workloadv1alpha1.ConditionFencingVerified, status, reason)
}

// eventReasons are the reasons of the hub's events about the named object.
func eventReasons(ctx context.Context, g Gomega, regarding string) []string {
	list := &eventsv1.EventList{}
	g.Expect(hub.List(ctx, list)).To(Succeed())
	var out []string
	for _, e := range list.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e.Reason)
		}
	}
	return out
}

// exclusiveCIDRs waits until the target's NodeCIDRsExclusive condition has the status and
// reason, and returns its message.
func exclusiveCIDRs(ctx context.Context, target string, status metav1.ConditionStatus, reason string) string {
	GinkgoHelper()
	return conditionIs(ctx, target, workloadv1alpha1.ConditionNodeCIDRsExclusive, status, reason)
}

// conditionIs waits until the target's condition of the kind has the status and reason, and
// returns its message.
func conditionIs(ctx context.Context, target, kind string, status metav1.ConditionStatus, reason string) string {
	GinkgoHelper()
	var c metav1.Condition
	Eventually(func(g Gomega) {
		c = targetCondition(ctx, g, target, kind)
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason))
	}).WithContext(ctx).Should(Succeed())
	return c.Message
}
