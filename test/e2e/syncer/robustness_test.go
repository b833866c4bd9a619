package syncer

import (
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

// configMap is a ConfigMap synced to the targets, holding one value.
func configMap(ns, name, value string, targets ...string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: synced(nil, targets...)},
		Data:       map[string]string{"value": value},
	}
}

// valueOf returns a function for Eventually that reads the value of a downstream ConfigMap.
func valueOf(ctx SpecContext, c client.Client, key client.ObjectKey) func() (string, error) {
	return func() (string, error) {
		cm := &corev1.ConfigMap{}
		err := c.Get(ctx, key, cm)
		return cm.Data["value"], err
	}
}

// ready returns a function for Eventually that reads the target's Ready condition.
func ready(ctx SpecContext, name string) func() (*metav1.Condition, error) {
	return func() (*metav1.Condition, error) {
		st := &workloadv1alpha1.SyncTarget{}
		if err := bed.Hub.Client.Get(ctx, client.ObjectKey{Name: name}, st); err != nil {
			return nil, err
		}
		for _, c := range st.Status.Conditions {
			if c.Type == workloadv1alpha1.ConditionReady {
				return &c, nil
			}
		}
		return nil, nil
	}
}

// withReason matches a condition with the status and reason.
func withReason(status metav1.ConditionStatus, reason string) OmegaMatcher {
	return And(Not(BeNil()), HaveField("Status", status), HaveField("Reason", reason))
}

var _ = Describe("Robustness", func() {
	It("resumes every flow where it stopped when the syncer restarts", func(ctx SpecContext) {
		hub, m1, s := bed.Hub.Client, bed.Member("m1").Client, syncers["m1"]
		ns := hubNamespace(ctx, "m1")
		held := configMap(ns, "held", "1", "m1")
		held.Annotations = map[string]string{workloadv1alpha1.FinalizersAnnotation("m1"): "coordination.example/drain"}
		changed, lost := configMap(ns, "changed", "1", "m1"), configMap(ns, "lost", "1", "m1")
		for _, cm := range []*corev1.ConfigMap{held, changed, lost} {
			Expect(hub.Create(ctx, cm)).To(Succeed())
			Eventually(valueOf(ctx, m1, downKey("m1", cm))).WithContext(ctx).Should(Equal("1"))
		}
		framework.Update(ctx, hub, held, func() {
			held.Annotations[workloadv1alpha1.DeletionAnnotation("m1")] = time.Now().UTC().Format(time.RFC3339)
		})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(lost), lost)).To(Succeed())
			g.Expect(lost.Finalizers).To(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())

		By("changing the hub while the syncer is stopped")
		s.stop()
		framework.Update(ctx, hub, held, func() { delete(held.Annotations, workloadv1alpha1.FinalizersAnnotation("m1")) })
		framework.Update(ctx, hub, changed, func() { changed.Data["value"] = "2" })
		fresh := configMap(ns, "fresh", "1", "m1")
		Expect(hub.Create(ctx, fresh)).To(Succeed())
		framework.Update(ctx, hub, lost, func() { controllerutil.RemoveFinalizer(lost, workloadv1alpha1.SyncerFinalizer("m1")) })
		Expect(hub.Delete(ctx, lost)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(valueOf(ctx, m1, downKey("m1", changed))()).To(Equal("1"))
			g.Expect(m1.Get(ctx, downKey("m1", held), &corev1.ConfigMap{})).To(Succeed())
			g.Expect(m1.Get(ctx, downKey("m1", lost), &corev1.ConfigMap{})).To(Succeed())
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed(), "the syncer was not stopped")

		By("starting it again")
		s.start()
		Eventually(framework.Deleted(ctx, m1, downKey("m1", held), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(held), held)).To(Succeed())
			g.Expect(held.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
			g.Expect(held.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())
		Eventually(valueOf(ctx, m1, downKey("m1", changed))).WithContext(ctx).Should(Equal("2"))
		Eventually(valueOf(ctx, m1, downKey("m1", fresh))).WithContext(ctx).Should(Equal("1"))
		Eventually(framework.Deleted(ctx, m1, downKey("m1", lost), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
	})

	It("catches up after the member's API server was down, and is not Ready meanwhile", func(ctx SpecContext) {
		hub, member, s := bed.Hub.Client, bed.Member("m2"), syncers["m2"]
		ns := hubNamespace(ctx, "m2")
		before, removed := configMap(ns, "before", "1", "m2"), configMap(ns, "removed", "1", "m2")
		for _, cm := range []*corev1.ConfigMap{before, removed} {
			Expect(hub.Create(ctx, cm)).To(Succeed())
			Eventually(valueOf(ctx, member.Client, downKey("m2", cm))).WithContext(ctx).Should(Equal("1"))
		}
		Eventually(ready(ctx, "m2")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))

		Expect(member.StopAPIServer()).To(Succeed())
		restarted := false
		DeferCleanup(func(ctx SpecContext) {
			if !restarted {
				Expect(member.StartAPIServer(ctx)).To(Succeed())
			}
		})
		framework.Update(ctx, hub, before, func() { before.Data["value"] = "2" })
		during := configMap(ns, "during", "1", "m2")
		Expect(hub.Create(ctx, during)).To(Succeed())
		framework.Update(ctx, hub, removed, func() {
			removed.Annotations = map[string]string{workloadv1alpha1.DeletionAnnotation("m2"): time.Now().UTC().Format(time.RFC3339)}
		})
		Eventually(ready(ctx, "m2")).WithContext(ctx).Should(withReason(metav1.ConditionFalse, workloadv1alpha1.ReasonUnreachable))
		Expect(s.done).NotTo(Receive(), "the syncer gave up during the outage")

		Expect(member.StartAPIServer(ctx)).To(Succeed())
		restarted = true
		Eventually(valueOf(ctx, member.Client, downKey("m2", before))).WithContext(ctx).Should(Equal("2"))
		Eventually(valueOf(ctx, member.Client, downKey("m2", during))).WithContext(ctx).Should(Equal("1"))
		Eventually(framework.Deleted(ctx, member.Client, downKey("m2", removed), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(removed), removed)).To(Succeed())
			g.Expect(removed.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m2")))
		}).WithContext(ctx).Should(Succeed())
		Eventually(ready(ctx, "m2")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
	})

	It("catches up after the hub's API server was down", func(ctx SpecContext) {
		hub, m1, s := bed.Hub, bed.Member("m1").Client, syncers["m1"]
		ns := hubNamespace(ctx, "m1")
		before := configMap(ns, "before", "1", "m1")
		Expect(hub.Client.Create(ctx, before)).To(Succeed())
		Eventually(valueOf(ctx, m1, downKey("m1", before))).WithContext(ctx).Should(Equal("1"))

		Expect(hub.StopAPIServer()).To(Succeed())
		Consistently(s.done).WithTimeout(3*time.Second).ShouldNot(Receive(), "the syncer gave up during the outage")
		Expect(hub.StartAPIServer(ctx)).To(Succeed())

		framework.Update(ctx, hub.Client, before, func() { before.Data["value"] = "2" })
		after := configMap(ns, "after", "1", "m1")
		Expect(hub.Client.Create(ctx, after)).To(Succeed())
		Eventually(valueOf(ctx, m1, downKey("m1", before))).WithContext(ctx).Should(Equal("2"))
		Eventually(valueOf(ctx, m1, downKey("m1", after))).WithContext(ctx).Should(Equal("1"))
	})

	It("keeps the hub's spec and the member in line under concurrent writes", func(ctx SpecContext) {
		hub, m1 := bed.Hub.Client, bed.Member("m1").Client
		ns := hubNamespace(ctx, "m1")
		deploy := deployment(ns, "busy", 1)
		Expect(hub.Create(ctx, deploy)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
			g.Expect(deploy.Status.Replicas).To(Equal(int32(1)))
		}).WithContext(ctx).Should(Succeed())

		// The user scales while the syncer writes the finalizer and the status of the same object.
		for replicas := int32(2); replicas <= 12; replicas++ {
			framework.Update(ctx, hub, deploy, func() { deploy.Spec.Replicas = ptr.To(replicas) })
		}
		down := &appsv1.Deployment{}
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", deploy), down)).To(Succeed())
			g.Expect(down.Spec.Replicas).To(HaveValue(Equal(int32(12))))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
			g.Expect(deploy.Status.Replicas).To(Equal(int32(12)))
		}).WithContext(ctx).Should(Succeed())
		Expect(deploy.Spec.Replicas).To(HaveValue(Equal(int32(12))))
	})
})

var _ = Describe("Permissions", func() {
	It("runs the syncers with only what config/ grants", func(ctx SpecContext) {
		opts := syncers["m1"].opts
		hub, err := client.New(opts.HubConfig, client.Options{Scheme: testbed.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		member, err := client.New(opts.MemberConfig, client.Options{Scheme: testbed.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		ns := hubNamespace(ctx, "m1")
		cm := configMap(ns, "guarded", "1")
		Expect(bed.Hub.Client.Create(ctx, cm)).To(Succeed())

		Expect(hub.Delete(ctx, cm)).To(Satisfy(apierrors.IsForbidden), "the syncer deletes nothing it syncs on the hub")
		Expect(hub.Create(ctx, configMap(ns, "made-up", "1"))).To(Satisfy(apierrors.IsForbidden))
		Expect(hub.List(ctx, &workloadv1alpha1.SyncTargetList{})).To(Succeed())
		Expect(hub.Delete(ctx, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "m1"}})).To(Satisfy(apierrors.IsForbidden))
		Expect(member.List(ctx, &corev1.NodeList{})).To(Satisfy(apierrors.IsForbidden))
		Expect(member.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "q"}})).
			To(Satisfy(apierrors.IsForbidden))

		By("on snapshots, no more than a restore's import needs: it lists or watches none, and changes no content")
		Expect(member.List(ctx, &snapshotv1.VolumeSnapshotContentList{})).To(Satisfy(apierrors.IsForbidden))
		Expect(member.List(ctx, &snapshotv1.VolumeSnapshotList{})).To(Satisfy(apierrors.IsForbidden))
		// A content changed could point another namespace's import at any storage snapshot, or
		// delete a replica's storage with it.
		content := &snapshotv1.VolumeSnapshotContent{ObjectMeta: metav1.ObjectMeta{Name: "custody-refused"}}
		toDelete := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"deletionPolicy":"Delete"}}`))
		Expect(member.Patch(ctx, content, toDelete)).To(Satisfy(apierrors.IsForbidden))
		Expect(member.Status().Patch(ctx, content, client.RawPatch(types.MergePatchType, []byte(`{"status":{"readyToUse":true}}`)))).
			To(Satisfy(apierrors.IsForbidden))
		Expect(member.DeleteAllOf(ctx, &snapshotv1.VolumeSnapshotContent{})).To(Satisfy(apierrors.IsForbidden))
	})
})
