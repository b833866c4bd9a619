package scheduling

import (
	"context"
	"fmt"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// world gives one test its own names, so that tests share the hub without seeing each other:
// its targets carry the label test=<id>, its Locations select on it, its namespaces carry it.
type world struct{ id string }

func newWorld() world { return world{id: rand.String(6)} }

func (w world) name(s string) string { return s + "-" + w.id }

// target creates a SyncTarget of the world in Location loc, Ready.
func (w world) target(ctx context.Context, name, loc string, mutate ...func(*workloadv1alpha1.SyncTargetSpec)) string {
	spec := workloadv1alpha1.SyncTargetSpec{Priority: 1}
	for _, m := range mutate {
		m(&spec)
	}
	t := framework.Target(ctx, hub, w.name(name), map[string]string{"test": w.id, "loc": loc}, spec)
	framework.SetReady(ctx, hub, t.Name, true)
	return t.Name
}

// location creates a Location of the world over the targets labelled loc=<loc>.
func (w world) location(ctx context.Context, loc string) string {
	labels := map[string]string{"test": w.id, "loc": loc}
	return framework.Location(ctx, hub, w.name(loc), labels, labels).Name
}

// placement creates a Placement of the world's namespaces onto the named Location.
func (w world) placement(ctx context.Context, name, loc string, mutate ...func(*schedulingv1alpha1.Placement)) string {
	p := &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: w.name(name)},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"test": w.id, "loc": loc}}},
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"test": w.id}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	Expect(hub.Create(ctx, p)).To(Succeed())
	return p.Name
}

func (w world) namespace(ctx context.Context, name string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.name(name), Labels: map[string]string{"test": w.id}}}
	Expect(hub.Create(ctx, ns)).To(Succeed())
	return ns.Name
}

func getPlacement(ctx context.Context, name string) *schedulingv1alpha1.Placement {
	p := &schedulingv1alpha1.Placement{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: name}, p)).To(Succeed())
	return p
}

func updatePlacement(ctx context.Context, name string, f func(*schedulingv1alpha1.Placement)) {
	framework.Patch(ctx, hub, &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name}}, f)
}

// placedOn returns the targets a namespace is on and not leaving, and those it is leaving.
func placedOn(ctx context.Context, ns string) (on, leaving []string) {
	o := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
	return stateOf(o)
}

func stateOf(o client.Object) (on, leaving []string) {
	for key, p := range workloadv1alpha1.Presences(o) {
		if p.Leaving {
			leaving = append(leaving, key)
		} else {
			on = append(on, key)
		}
	}
	sort.Strings(on)
	sort.Strings(leaving)
	return on, leaving
}

// expectPlaced waits until the namespace is on exactly the targets on, and leaving exactly
// the targets leaving.
func expectPlaced(ctx context.Context, ns string, on, leaving []string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		gotOn, gotLeaving := placedOn(ctx, ns)
		g.Expect(gotOn).To(ConsistOf(on), "on")
		g.Expect(gotLeaving).To(ConsistOf(leaving), "leaving")
	}).WithContext(ctx).Should(Succeed())
}

// expectCondition waits until the Placement's condition has the status and reason.
func expectCondition(ctx context.Context, placement, typ string, status metav1.ConditionStatus, reason string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		c := meta.FindStatusCondition(getPlacement(ctx, placement).Status.Conditions, typ)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(status))
		g.Expect(c.Reason).To(Equal(reason))
	}).WithContext(ctx).Should(Succeed())
}

// expectEvent waits for an event about the named object with the reason.
func expectEvent(ctx context.Context, regarding, reason string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(hub.List(ctx, list)).To(Succeed())
		var seen []string
		for _, e := range list.Items {
			if e.Regarding.Name == regarding {
				if e.Reason == reason {
					return
				}
				seen = append(seen, e.Reason)
			}
		}
		g.Expect(fmt.Sprint(seen)).To(ContainSubstring(reason), "events about %s", regarding)
	}).WithContext(ctx).Should(Succeed())
}

func phaseOf(ctx context.Context, placement string) func() schedulingv1alpha1.PlacementPhase {
	return func() schedulingv1alpha1.PlacementPhase { return getPlacement(ctx, placement).Status.Phase }
}
