package dr

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// Two pairs of one Location: the first made is acted on, the second waits, and both say so.
var _ = Describe("Two LocationPairs sharing a Location", func() {
	It("name each other in their condition, and only the first made is acted on until it is gone", func(ctx SpecContext) {
		id := rand.String(5)
		first := pairOf(ctx, "first-"+id, schedulingv1alpha1.LocationPairSpec{})
		exclusive(ctx, first, metav1.ConditionTrue, "no other LocationPair")
		phase(ctx, first, schedulingv1alpha1.PairProtecting)

		// The same Locations the other way round: acted on, it would protect west to east.
		second := &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: "second-" + id},
			Spec: schedulingv1alpha1.LocationPairSpec{Primary: "west", Secondary: "east"}}
		Expect(hub.Create(ctx, second)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hub.Delete(ctx, second))).To(Succeed()) })
		exclusive(ctx, first, metav1.ConditionFalse, "made after this pair and sharing a Location with it: LocationPair "+second.Name+" (Location east)")
		exclusive(ctx, second, metav1.ConditionFalse, "made before this pair and sharing a Location with it: LocationPair "+first.Name+" (Location west)")
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(second), second)).To(Succeed())
			g.Expect(second.Status.Phase).To(Equal(schedulingv1alpha1.PairPending))
			g.Expect(second.Status.ActiveLocation).To(BeEmpty())
			replications := &storagev1alpha1.VolumeReplicationList{}
			g.Expect(hub.List(ctx, replications, client.MatchingLabels{schedulingv1alpha1.PairLabel: second.Name})).To(Succeed())
			g.Expect(replications.Items).To(BeEmpty())
		}).WithContext(ctx).Within(3 * time.Second).Should(Succeed())
		phase(ctx, first, schedulingv1alpha1.PairProtecting)

		Expect(hub.Delete(ctx, first)).To(Succeed())
		exclusive(ctx, second, metav1.ConditionTrue, "no other LocationPair")
		phase(ctx, second, schedulingv1alpha1.PairProtecting)
	})
})

// exclusive waits until the pair's LocationsExclusive condition has the status and its
// message holds message.
func exclusive(ctx context.Context, pair *schedulingv1alpha1.LocationPair, status metav1.ConditionStatus, message string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		c := meta.FindStatusCondition(pair.Status.Conditions, schedulingv1alpha1.ConditionLocationsExclusive)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Message).To(ContainSubstring(message))
	}).WithContext(ctx).Should(Succeed())
}

// phase waits until the pair is in the phase.
func phase(ctx context.Context, pair *schedulingv1alpha1.LocationPair, want schedulingv1alpha1.LocationPairPhase) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		g.Expect(pair.Status.Phase).To(Equal(want))
	}).WithContext(ctx).Should(Succeed())
}
