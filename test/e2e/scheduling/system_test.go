package scheduling

import (
	"context"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

var _ = Describe("A Placement of every namespace", func() {
	It("places the users' namespaces, never Kubernetes' or Custody's, and names those it refused", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		w.location(ctx, "a")
		system := []string{"kube-system", "kube-public", "kube-node-lease", "custody-system", workloadv1alpha1.HeartbeatNamespace}
		for _, name := range system {
			Expect(client.IgnoreAlreadyExists(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}))).To(Succeed())
		}
		ns := w.namespace(ctx, "ns")
		By("binding a system namespace to the Placement before the Placement exists, as one made before the rule would have")
		stale := "kube-" + w.name("stale")
		p := w.name("every")
		Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: stale,
			Annotations: map[string]string{schedulingv1alpha1.PlacementAnnotation: p}}})).To(Succeed())
		system = append(system, stale)

		w.placement(ctx, "every", "a", func(p *schedulingv1alpha1.Placement) { p.Spec.NamespaceSelector = metav1.LabelSelector{} })
		DeferCleanup(deletePlacement, p)
		expectPlaced(ctx, ns, []string{t1}, nil)
		expectCondition(ctx, p, schedulingv1alpha1.ConditionNamespacesAllowed, metav1.ConditionFalse, schedulingv1alpha1.ReasonSystemNamespacesRefused)
		expectEvent(ctx, p, schedulingv1alpha1.ReasonSystemNamespacesRefused)
		msg := meta.FindStatusCondition(getPlacement(ctx, p).Status.Conditions, schedulingv1alpha1.ConditionNamespacesAllowed).Message
		for _, name := range system {
			Expect(msg).To(ContainSubstring(name))
		}
		Expect(msg).NotTo(ContainSubstring(ns))

		notPlaced := func(g Gomega) {
			for _, name := range system {
				o := &corev1.Namespace{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Name: name}, o)).To(Succeed())
				g.Expect(boundTo(o)).NotTo(ContainElement(p), "%s is bound to the Placement", name)
				on, _ := stateOf(o)
				g.Expect(on).NotTo(ContainElement(t1), "%s is placed", name)
			}
		}
		Eventually(notPlaced).WithContext(ctx).Should(Succeed())
		Consistently(notPlaced).WithContext(ctx).Should(Succeed())
	})
})

// boundTo returns the Placements a namespace's annotation binds it to.
func boundTo(ns *corev1.Namespace) []string {
	return strings.Split(ns.Annotations[schedulingv1alpha1.PlacementAnnotation], ",")
}

// deletePlacement deletes the Placement and waits until it is gone, so that a Placement that
// selects every namespace binds none of another spec's.
func deletePlacement(ctx context.Context, name string) {
	p := &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name}}
	Expect(client.IgnoreNotFound(hub.Delete(ctx, p))).To(Succeed())
	Eventually(func() error {
		return hub.Get(ctx, client.ObjectKey{Name: name}, p)
	}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
}
