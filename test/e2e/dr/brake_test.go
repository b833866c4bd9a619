package dr

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// The brake on mass failure (fencing.DefaultBrake, which the bed's controller runs with: more
// than 55% of at least 10 targets lost at once): the bed's three members are made eleven
// targets by heartbeating stand-ins.
var _ = Describe("A LocationPair whose active Location is lost with most of the hub's targets", func() {
	It("does not fail over by itself while they are lost, says why, and fails over when declared", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, _ := boundClaim(ctx, ns, "data", "m1")
		threshold := 5 * time.Second
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1d",
			FailoverThreshold: &metav1.Duration{Duration: threshold}}, vo)
		ins := framework.StandIns(ctx, hub, 8, env.HeartbeatPeriod())

		By("losing the primary's two members and six stand-ins: 8 of 11 targets")
		ins.Silence(ins.Names[:6], true)
		stopMembers("m1", "m3")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			c := meta.FindStatusCondition(pair.Status.Conditions, schedulingv1alpha1.ConditionProgressing)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(schedulingv1alpha1.ReasonMassFailure), c.Message)
			g.Expect(c.Message).To(ContainSubstring("east is lost, and 8 of the hub's 11 targets are Unreachable at once"))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.ActiveLocation).To(Equal("east"))
			g.Expect(pair.Status.LastAction).To(BeNil())
			g.Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: storagev1alpha1.FenceName("m1", "east")}, &storagev1alpha1.Fence{}))).
				To(BeTrue(), "m1 is fenced under the brake")
		}).WithContext(ctx).WithTimeout(2 * threshold).Should(Succeed())

		By("declaring the failover: it goes ahead under the brake")
		custody(ctx, "failover", ns, "--yes", "--wait=false")
		completed(ctx, pair)
		Expect(pair.Status.LastAction.Trigger).To(Equal(schedulingv1alpha1.TriggerDeclared))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Owner).To(Equal("m2"))

		By("bringing everything back: the old primary cleans up and the pair protects again")
		ins.Silence(ins.Names[:6], false)
		for _, m := range []string{"m1", "m3"} {
			Expect(env.StartMember(ctx, m)).To(Succeed())
		}
		// The pair protects as soon as one member of the old primary takes the replicas,
		// which may be before the other's Fence is gone.
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting), "%v", pair.Status.Conditions)
			g.Expect(fencesOf(ctx, "m1", "m3")).To(BeEmpty(), "Fences are left")
		}).WithContext(ctx).Should(Succeed())
	})
})
