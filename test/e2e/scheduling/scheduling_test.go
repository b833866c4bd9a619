package scheduling

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

var _ = Describe("Placement", func() {
	It("counts a Location's targets as one is cordoned and another moves to another Location", func(ctx SpecContext) {
		w := newWorld()
		t1, t2 := w.target(ctx, "t1", "a"), w.target(ctx, "t2", "a")
		a, b := w.location(ctx, "a"), w.location(ctx, "b")
		expectCounts := func(loc string, instances, available int) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				l := &schedulingv1alpha1.Location{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Name: loc}, l)).To(Succeed())
				g.Expect(l.Status.Instances).To(BeEquivalentTo(instances))
				g.Expect(l.Status.AvailableInstances).To(BeEquivalentTo(available))
			}).WithContext(ctx).Should(Succeed())
		}
		expectCounts(a, 2, 2)
		expectCounts(b, 0, 0)

		By("cordoning t1: a counts it, not as available")
		framework.Cordon(ctx, hub, t1, true)
		expectCounts(a, 2, 1)

		By("labelling t2 into b: a counts it no more, and b counts it")
		framework.Patch(ctx, hub, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t2}}, func(t *workloadv1alpha1.SyncTarget) {
			t.Labels["loc"] = "b"
		})
		expectCounts(a, 1, 0)
		expectCounts(b, 1, 1)
	})

	It("goes Pending, Unbound, Bound and places the namespace and its objects", func(ctx SpecContext) {
		w := newWorld()
		p := w.placement(ctx, "p", "a")
		Eventually(phaseOf(ctx, p)).WithContext(ctx).Should(Equal(schedulingv1alpha1.PlacementPending))
		expectCondition(ctx, p, schedulingv1alpha1.ConditionReady, metav1.ConditionFalse, schedulingv1alpha1.ReasonNoMatchingLocation)
		expectEvent(ctx, p, schedulingv1alpha1.ReasonNoMatchingLocation)

		t1, t2 := w.target(ctx, "t1", "a"), w.target(ctx, "t2", "a")
		loc := w.location(ctx, "a")
		Eventually(phaseOf(ctx, p)).WithContext(ctx).Should(Equal(schedulingv1alpha1.PlacementUnbound))
		Expect(getPlacement(ctx, p).Status.SelectedLocation).To(Equal(loc))
		expectCondition(ctx, p, schedulingv1alpha1.ConditionReady, metav1.ConditionTrue, schedulingv1alpha1.ReasonLocationSelected)
		Eventually(func(g Gomega) {
			l := &schedulingv1alpha1.Location{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: loc}, l)).To(Succeed())
			g.Expect(l.Status.Instances).To(BeEquivalentTo(2))
			g.Expect(l.Status.AvailableInstances).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())

		ns := w.namespace(ctx, "ns")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}}
		pvc := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		Expect(hub.Create(ctx, pvc)).To(Succeed())
		Eventually(phaseOf(ctx, p)).WithContext(ctx).Should(Equal(schedulingv1alpha1.PlacementBound))

		var key string
		Eventually(func(g Gomega) {
			on, _ := placedOn(ctx, ns)
			g.Expect(on).To(HaveLen(1))
			key = on[0]
		}).WithContext(ctx).Should(Succeed())
		Expect(key).To(BeElementOf(t1, t2))
		o := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
		Expect(o.Annotations).To(HaveKeyWithValue(schedulingv1alpha1.PlacementAnnotation, p))
		Expect(o.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel(key), "Sync"))
		expectEvent(ctx, ns, schedulingv1alpha1.ReasonScheduled)

		By("labelling the objects inside: Sync for a ConfigMap, empty for a PVC")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel(key), "Sync"))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pvc), pvc)).To(Succeed())
			g.Expect(pvc.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel(key), ""))
		}).WithContext(ctx).Should(Succeed())
	})

	It("reselects the Location when the Placement changes, and moves the namespace", func(ctx SpecContext) {
		w := newWorld()
		t1, t2 := w.target(ctx, "t1", "a"), w.target(ctx, "t2", "b")
		locA, locB := w.location(ctx, "a"), w.location(ctx, "b")
		p := w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1}, nil)

		updatePlacement(ctx, p, func(p *schedulingv1alpha1.Placement) {
			p.Spec.LocationSelectors[0].MatchLabels["loc"] = "b"
		})
		Eventually(func() string { return getPlacement(ctx, p).Status.SelectedLocation }).WithContext(ctx).Should(Equal(locB))
		Expect(locA).NotTo(Equal(locB))
		expectPlaced(ctx, ns, []string{t2}, []string{t1})
		expectEvent(ctx, ns, schedulingv1alpha1.ReasonRemoved)
	})

	It("keeps one target per Location through two Placements", func(ctx SpecContext) {
		w := newWorld()
		t1, t2 := w.target(ctx, "t1", "a"), w.target(ctx, "t2", "b")
		w.location(ctx, "a")
		w.location(ctx, "b")
		pa, pb := w.placement(ctx, "pa", "a"), w.placement(ctx, "pb", "b")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1, t2}, nil)
		o := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
		Expect(o.Annotations[schedulingv1alpha1.PlacementAnnotation]).To(Equal(min(pa, pb) + "," + max(pa, pb)))
	})

	It("unbinds its namespaces and requests their removal when deleted", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		w.location(ctx, "a")
		p := w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1}, nil)

		Expect(hub.Delete(ctx, &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: p}})).To(Succeed())
		Eventually(func() error {
			return hub.Get(ctx, client.ObjectKey{Name: p}, &schedulingv1alpha1.Placement{})
		}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")))
		expectPlaced(ctx, ns, nil, []string{t1})
		o := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
		Expect(o.Annotations).NotTo(HaveKey(schedulingv1alpha1.PlacementAnnotation))
	})
})

var _ = Describe("Scheduler", func() {
	It("spreads by priority ÷ (load + 1) and keeps placed namespaces where they are", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		t2 := w.target(ctx, "t2", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.Priority = 2 })
		w.location(ctx, "a")
		w.placement(ctx, "p", "a")
		// Scores: t2 2/1 > t1 1/1; then t1 1/1 = t2 2/2, t1 by name; then t2 2/2 > t1 1/2.
		var namespaces []string
		for _, want := range []string{t2, t1, t2} {
			ns := w.namespace(ctx, "ns"+want[:2]+string(rune('a'+len(namespaces))))
			expectPlaced(ctx, ns, []string{want}, nil)
			namespaces = append(namespaces, ns)
		}

		By("adding a far better target, which takes nothing from the placed namespaces")
		w.target(ctx, "t3", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.Priority = 100 })
		Consistently(func(g Gomega) {
			for i, want := range []string{t2, t1, t2} {
				on, leaving := placedOn(ctx, namespaces[i])
				g.Expect(on).To(Equal([]string{want}))
				g.Expect(leaving).To(BeEmpty())
			}
		}).WithContext(ctx).Should(Succeed())
	})

	It("moves a namespace off a target that stops being Ready", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		t2 := w.target(ctx, "t2", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.Priority = 0 })
		w.location(ctx, "a")
		w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		expectPlaced(ctx, ns, []string{t1}, nil)

		framework.SetReady(ctx, hub, t1, false)
		expectPlaced(ctx, ns, []string{t2}, []string{t1})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			on, leaving := stateOf(cm)
			g.Expect(on).To(Equal([]string{t2}))
			g.Expect(leaving).To(Equal([]string{t1}))
		}).WithContext(ctx).Should(Succeed())

		By("clearing the deletion annotation once the syncer has removed the state label")
		o := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
		patch := client.MergeFrom(o.DeepCopy())
		delete(o.Labels, workloadv1alpha1.StateLabel(t1))
		Expect(hub.Patch(ctx, o, patch)).To(Succeed())
		Eventually(func() map[string]string {
			Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, o)).To(Succeed())
			return o.Annotations
		}).WithContext(ctx).ShouldNot(HaveKey(workloadv1alpha1.DeletionAnnotation(t1)))
		expectPlaced(ctx, ns, []string{t2}, nil)
	})

	It("moves off a cordoned target only when another target can take the namespace", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		w.location(ctx, "a")
		w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1}, nil)

		framework.Cordon(ctx, hub, t1, true)
		Consistently(func() []string { on, _ := placedOn(ctx, ns); return on }).WithContext(ctx).Should(Equal([]string{t1}))

		t2 := w.target(ctx, "t2", "a")
		expectPlaced(ctx, ns, []string{t2}, []string{t1})
	})

	It("removes a namespace from an evicting target even with nowhere to go", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		w.location(ctx, "a")
		w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1}, nil)

		framework.PatchTarget(ctx, hub, t1, func(s *workloadv1alpha1.SyncTargetSpec) { s.Evict = true })
		expectPlaced(ctx, ns, nil, []string{t1})
		expectEvent(ctx, ns, schedulingv1alpha1.ReasonNoEligibleTarget)
	})

	It("places a namespace only on targets that reach its volumes' storage domains", func(ctx SpecContext) {
		w := newWorld()
		w.target(ctx, "t1", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.StorageDomains = []string{"east"} })
		t2 := w.target(ctx, "t2", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.StorageDomains = []string{"west"} })
		w.location(ctx, "a")
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.name("ns")}}
		Expect(hub.Create(ctx, ns)).To(Succeed())
		Expect(hub.Create(ctx, &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "data",
				Annotations: map[string]string{storagev1alpha1.DomainAnnotation: "west"}},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})).To(Succeed())
		patch := client.MergeFrom(ns.DeepCopy())
		ns.Labels = map[string]string{"test": w.id}
		Expect(hub.Patch(ctx, ns, patch)).To(Succeed())
		w.placement(ctx, "p", "a")
		expectPlaced(ctx, ns.Name, []string{t2}, nil)
	})
})

var _ = Describe("Bad input", func() {
	It("keeps restricted targets for the Placements that name them", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a", func(s *workloadv1alpha1.SyncTargetSpec) { s.Restricted = true })
		w.location(ctx, "a")
		p := w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectCondition(ctx, p, schedulingv1alpha1.ConditionTargetsAvailable, metav1.ConditionFalse, schedulingv1alpha1.ReasonTargetRestricted)
		expectEvent(ctx, p, schedulingv1alpha1.ReasonTargetRestricted)
		expectEvent(ctx, ns, schedulingv1alpha1.ReasonTargetRestricted)
		Consistently(func() []string { on, _ := placedOn(ctx, ns); return on }).WithContext(ctx).Should(BeEmpty())

		updatePlacement(ctx, p, func(p *schedulingv1alpha1.Placement) { p.Spec.TargetNames = []string{t1} })
		expectCondition(ctx, p, schedulingv1alpha1.ConditionTargetsAvailable, metav1.ConditionTrue, schedulingv1alpha1.ReasonTargetsAvailable)
		expectPlaced(ctx, ns, []string{t1}, nil)
	})

	It("reports a selector that does not parse and leaves everything placed", func(ctx SpecContext) {
		w := newWorld()
		t1 := w.target(ctx, "t1", "a")
		loc := w.location(ctx, "a")
		p := w.placement(ctx, "p", "a")
		ns := w.namespace(ctx, "ns")
		expectPlaced(ctx, ns, []string{t1}, nil)

		updatePlacement(ctx, p, func(p *schedulingv1alpha1.Placement) {
			p.Spec.LocationSelectors[0].MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Sometimes"}}
		})
		expectCondition(ctx, p, schedulingv1alpha1.ConditionSpecValid, metav1.ConditionFalse, schedulingv1alpha1.ReasonInvalidSelector)
		expectEvent(ctx, p, schedulingv1alpha1.ReasonInvalidSelector)

		By("breaking the Location's selector too")
		l := &schedulingv1alpha1.Location{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: loc}, l)).To(Succeed())
		patch := client.MergeFrom(l.DeepCopy())
		l.Spec.InstanceSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Sometimes"}}
		Expect(hub.Patch(ctx, l, patch)).To(Succeed())
		expectEvent(ctx, loc, schedulingv1alpha1.ReasonInvalidSelector)

		Consistently(func(g Gomega) {
			on, leaving := placedOn(ctx, ns)
			g.Expect(on).To(Equal([]string{t1}))
			g.Expect(leaving).To(BeEmpty())
			got := getPlacement(ctx, p)
			g.Expect(got.Status.SelectedLocation).To(Equal(loc))
			g.Expect(got.Status.Phase).To(Equal(schedulingv1alpha1.PlacementBound))
		}).WithContext(ctx).Should(Succeed())
	})

	It("reports a Location or target that does not exist", func(ctx SpecContext) {
		w := newWorld()
		w.target(ctx, "t1", "a")
		w.location(ctx, "a")
		missingLoc := w.placement(ctx, "nloc", "a", func(p *schedulingv1alpha1.Placement) {
			p.Spec.LocationSelectors, p.Spec.LocationName = nil, "nowhere"
		})
		expectCondition(ctx, missingLoc, schedulingv1alpha1.ConditionReady, metav1.ConditionFalse, schedulingv1alpha1.ReasonLocationNotFound)
		expectEvent(ctx, missingLoc, schedulingv1alpha1.ReasonLocationNotFound)
		Expect(getPlacement(ctx, missingLoc).Status.Phase).To(Equal(schedulingv1alpha1.PlacementPending))

		missingTarget := w.placement(ctx, "ntgt", "a", func(p *schedulingv1alpha1.Placement) {
			p.Spec.TargetNames = []string{"ghost"}
		})
		expectCondition(ctx, missingTarget, schedulingv1alpha1.ConditionTargetsAvailable, metav1.ConditionFalse, schedulingv1alpha1.ReasonTargetNotFound)
		expectEvent(ctx, missingTarget, schedulingv1alpha1.ReasonTargetNotFound)
	})

	It("rejects a Placement that names no Location at all", func(ctx context.Context) {
		p := &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: newWorld().name("empty")}}
		Expect(hub.Create(ctx, p)).To(MatchError(ContainSubstring("set locationSelectors, locationName, or both")))
	})
})
