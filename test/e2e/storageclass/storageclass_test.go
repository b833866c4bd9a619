package storageclass

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

const rbd = "rbd.csi.ceph.com"

var ssd = map[string]string{"clusterID": "c1", "pool": "ssd"}

var _ = Describe("StorageClassesCompatible", func() {
	It("is True when the targets report the same classes, beside the location controller's status", func(ctx SpecContext) {
		f := newFixture()
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd), class("slow", "nfs.csi.k8s.io", nil))
		t2 := f.target(ctx, "t2", true, class("slow", "nfs.csi.k8s.io", nil), class("fast", rbd, ssd))
		f.location(ctx)
		framework.SetReady(ctx, hub, t1, true)
		framework.SetReady(ctx, hub, t2, true)

		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "classes: 2, targets: 2")
		f.expectCondition(ctx, schedulingv1alpha1.ConditionSelectorValid, metav1.ConditionTrue, schedulingv1alpha1.ReasonSelectorValid, "2 targets, 2 available")
		f.expectNoWarning(ctx)
	})

	It("names a target that has not reported yet without a Warning, and compares it once it reports", func(ctx SpecContext) {
		f := newFixture()
		f.target(ctx, "t1", true, class("fast", rbd, ssd))
		f.location(ctx)
		t2 := f.joined(ctx, "t2", true)

		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "targets: 1", "not compared until they report: "+t2)
		f.expectNoWarning(ctx)

		report(ctx, t2)
		parts := []string{fmt.Sprintf(`class "fast" is missing on %s`, t2)}
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMissing, parts...)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonStorageClassMissing, parts...)
	})

	It("is False on a provisioner mismatch, with a Warning, and recovers with a Normal event", func(ctx SpecContext) {
		f := newFixture()
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd))
		t2 := f.target(ctx, "t2", true, class("fast", "ebs.csi.aws.com", ssd))
		f.location(ctx)

		parts := []string{`class "fast" differs in provisioner`, `"` + rbd + `" on ` + t1, `"ebs.csi.aws.com" on ` + t2}
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, parts...)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonStorageClassMismatch, parts...)

		report(ctx, t2, class("fast", rbd, ssd))
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "classes: 1, targets: 2")
		f.expectEvent(ctx, corev1.EventTypeNormal, schedulingv1alpha1.ReasonStorageClassesMatch, "Volumes may move again")
	})

	It("is False on a parameters mismatch, naming the parameter", func(ctx SpecContext) {
		f := newFixture()
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd))
		t2 := f.target(ctx, "t2", true, class("fast", rbd, map[string]string{"clusterID": "c1", "pool": "hdd"}))
		f.location(ctx)

		parts := []string{`class "fast" differs in parameters`, `{pool="ssd"} on ` + t1, `{pool="hdd"} on ` + t2}
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, parts...)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonStorageClassMismatch, parts...)
	})

	It("is False when a class is missing on one target", func(ctx SpecContext) {
		f := newFixture()
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd), class("gold", rbd, nil))
		t2 := f.target(ctx, "t2", true, class("fast", rbd, ssd))
		t3 := f.target(ctx, "t3", true, class("gold", rbd, nil), class("fast", rbd, ssd))
		f.location(ctx)

		parts := []string{fmt.Sprintf(`class "gold" is missing on %s (present on %s, %s)`, t2, t1, t3)}
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMissing, parts...)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonStorageClassMissing, parts...)

		report(ctx, t2, class("fast", rbd, ssd), class("gold", rbd, nil))
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "classes: 2, targets: 3")
		f.expectEvent(ctx, corev1.EventTypeNormal, schedulingv1alpha1.ReasonStorageClassesMatch)
	})

	It("is False when the targets mark different classes default, naming each target's default", func(ctx SpecContext) {
		f := newFixture()
		fastDefault, slowDefault := class("fast", rbd, ssd), class("slow", "nfs.csi.k8s.io", nil)
		fastDefault.Default, slowDefault.Default = true, true
		t1 := f.target(ctx, "t1", true, fastDefault, class("slow", "nfs.csi.k8s.io", nil))
		t2 := f.target(ctx, "t2", true, class("fast", rbd, ssd), slowDefault)
		f.location(ctx)

		parts := []string{`the default class differs: "fast" on ` + t1 + `; "slow" on ` + t2, "claims that name no class"}
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonDefaultStorageClassMismatch, parts...)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonDefaultStorageClassMismatch, parts...)

		report(ctx, t2, fastDefault, class("slow", "nfs.csi.k8s.io", nil))
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "classes: 2, targets: 2")
	})

	It("reports settings that differ without refusing moves", func(ctx SpecContext) {
		f := newFixture()
		retain := class("fast", rbd, ssd)
		retain.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd))
		t2 := f.target(ctx, "t2", true, retain)
		f.location(ctx)

		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassSettingsDiffer,
			`class "fast" differs in reclaimPolicy: "Delete" on `+t1+`; "Retain" on `+t2)
		f.expectNoWarning(ctx)
	})

	It("follows targets that join and leave the Location by label, and targets being deleted", func(ctx SpecContext) {
		f := newFixture()
		f.target(ctx, "t1", true, class("fast", rbd, ssd))
		f.target(ctx, "t2", true, class("fast", rbd, ssd))
		t3 := f.target(ctx, "t3", false, class("fast", "other", ssd))
		f.location(ctx)
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "targets: 2")

		setIn(ctx, t3, true)
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, `"other" on `+t3)
		f.expectEvent(ctx, corev1.EventTypeWarning, schedulingv1alpha1.ReasonStorageClassMismatch, `"other" on `+t3)

		setIn(ctx, t3, false)
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "targets: 2")

		setIn(ctx, t3, true)
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, `"other" on `+t3)
		updateTarget(ctx, t3, false, func(t *workloadv1alpha1.SyncTarget) { t.Finalizers = []string{"test.custody.dev/hold"} })
		Expect(hub.Delete(ctx, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t3}})).To(Succeed())
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "targets: 2")
		updateTarget(ctx, t3, false, func(t *workloadv1alpha1.SyncTarget) { t.Finalizers = nil })
	})

	It("restores its condition when another writer drops it", func(ctx SpecContext) {
		f := newFixture()
		f.target(ctx, "t1", true, class("fast", rbd, ssd))
		t2 := f.target(ctx, "t2", true, class("fast", "other", ssd))
		f.location(ctx)
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, `"other" on `+t2)

		Eventually(func() error {
			l := &schedulingv1alpha1.Location{}
			if err := hub.Get(ctx, client.ObjectKey{Name: f.loc}, l); err != nil {
				return err
			}
			meta.RemoveStatusCondition(&l.Status.Conditions, schedulingv1alpha1.ConditionStorageClassesCompatible)
			return hub.Status().Update(ctx, l)
		}).WithContext(ctx).Should(Succeed())
		f.expectCompatible(ctx, metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMismatch, `"other" on `+t2)
	})

	It("keeps both writers' conditions while targets churn", func(ctx SpecContext) {
		f := newFixture()
		t1 := f.target(ctx, "t1", true, class("fast", rbd, ssd))
		t2 := f.target(ctx, "t2", true, class("fast", rbd, ssd))
		f.location(ctx)
		// Each round changes both conditions at once: Ready changes the location controller's
		// message (the available count), the provisioner this controller's status.
		for i := range 10 {
			framework.SetReady(ctx, hub, t1, i%2 == 0)
			report(ctx, t2, class("fast", []string{"other", rbd}[i%2], ssd))
		}
		f.expectCompatible(ctx, metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch, "targets: 2")
		f.expectCondition(ctx, schedulingv1alpha1.ConditionSelectorValid, metav1.ConditionTrue, schedulingv1alpha1.ReasonSelectorValid, "2 targets, 0 available")
	})
})
