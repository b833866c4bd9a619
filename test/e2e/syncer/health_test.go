package syncer

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// eventReasons lists the reasons of the events about the SyncTarget called name.
func eventReasons(ctx SpecContext, name string) []string {
	list := &eventsv1.EventList{}
	Expect(bed.Hub.Client.List(ctx, list)).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.Regarding.Kind == "SyncTarget" && e.Regarding.Name == name {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// leaseOf is the heartbeat Lease of the target called name.
func leaseOf(ctx SpecContext, g Gomega, name string) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{}
	g.Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name}, lease)).To(Succeed())
	return lease
}

var _ = Describe("Health", func() {
	It("reports a heartbeating target Ready, with its key and its member's storage classes", func(ctx SpecContext) {
		hub := bed.Hub.Client
		Eventually(ready(ctx, "m1")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
		st := &workloadv1alpha1.SyncTarget{}
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
			g.Expect(st.Status.StorageClasses).To(ContainElement(workloadv1alpha1.StorageClassInfo{
				Name: "shared", Provisioner: bed.Storage("shared").Provisioner(), Parameters: map[string]string{"domain": "shared"},
				ReclaimPolicy: corev1.PersistentVolumeReclaimDelete, VolumeBindingMode: string(storagev1.VolumeBindingImmediate),
				AllowVolumeExpansion: true, Default: true, Domain: "shared",
			}))
		}).WithContext(ctx).Should(Succeed())
		Expect(st.Status.Key).To(Equal("m1"))
		// A loaded machine can hold a beat back for a moment; a live syncer beats again within the grace.
		Eventually(func(g Gomega) {
			g.Expect(leaseOf(ctx, g, "m1").Spec.RenewTime.Time).To(BeTemporally("~", time.Now(), grace))
		}).WithContext(ctx).Should(Succeed())
		Expect(st.Status.SyncedResources).To(Equal([]string{
			"configmaps", "deployments.apps", "jobs.batch", "namespaces", "networkpolicies.networking.k8s.io", "persistentvolumeclaims",
			"persistentvolumes", "pods", "secrets", "serviceaccounts", "services", "statefulsets.apps",
		}))
		Expect(leaseOf(ctx, Default, "m1").Spec.LeaseDurationSeconds).To(HaveValue(Equal(int32(1))))

		By("renewing the Lease, with a clean report in it, and writing the status only when it changes")
		Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
		version, first := st.ResourceVersion, leaseOf(ctx, Default, "m1")
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
			g.Expect(st.ResourceVersion).To(Equal(version), "the SyncTarget was written")
		}).WithContext(ctx).WithTimeout(3 * heartbeatPeriod).Should(Succeed())
		last := leaseOf(ctx, Default, "m1")
		Expect(last.Spec.RenewTime.Time).To(BeTemporally(">=", first.Spec.RenewTime.Add(2*heartbeatPeriod)))
		report, ok := workloadv1alpha1.CleanReportOf(last)
		Expect(ok).To(BeTrue(), "no clean report in the Lease")
		Expect(report.Clean).To(HaveKeyWithValue("shared", metav1.ConditionTrue))
		Expect(st.CleanReportedAt(last, "shared")).To(BeTemporally(">=", first.Spec.RenewTime.Truncate(time.Second)))

		By("reporting a new default class of the member")
		fast := &storagev1.StorageClass{
			ObjectMeta:  metav1.ObjectMeta{Name: "fast", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}},
			Provisioner: "fast.example.com", ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimRetain),
			VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		}
		Expect(bed.Member("m1").Client.Create(ctx, fast)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(bed.Member("m1").Client.Delete(ctx, fast)).To(Succeed()) })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
			g.Expect(st.Status.StorageClasses).To(ContainElement(workloadv1alpha1.StorageClassInfo{
				Name: "fast", Provisioner: "fast.example.com", ReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				VolumeBindingMode: string(storagev1.VolumeBindingWaitForFirstConsumer), Default: true,
			}))
		}).WithContext(ctx).Should(Succeed())

		By("keeping what another writer puts in the status")
		// Written on the version read, as another controller writes; the heartbeat may write
		// between the read and the patch, and then the patch is made again.
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
			orig := st.DeepCopy()
			meta.SetStatusCondition(&st.Status.Conditions, metav1.Condition{Type: "StorageClassesConsistent", Status: metav1.ConditionTrue, Reason: "Consistent"})
			g.Expect(hub.Status().Patch(ctx, st, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
		patched := time.Now()
		Eventually(func(g Gomega) {
			report, _ := workloadv1alpha1.CleanReportOf(leaseOf(ctx, g, "m1"))
			g.Expect(report.Time.Time).To(BeTemporally(">=", patched.Add(2*heartbeatPeriod)))
		}).WithContext(ctx).Should(Succeed())
		Expect(hub.Get(ctx, client.ObjectKey{Name: "m1"}, st)).To(Succeed())
		Expect(meta.FindStatusCondition(st.Status.Conditions, "StorageClassesConsistent")).NotTo(BeNil())
		Expect(meta.FindStatusCondition(st.Status.Conditions, workloadv1alpha1.ConditionReady)).NotTo(BeNil())
		Expect(st.Status.StorageClasses).NotTo(BeEmpty())
	})

	It("turns a target Unreachable when its syncer stops past the grace, and Ready when it returns", func(ctx SpecContext) {
		createSyncTarget(ctx, "h1")
		s := startSyncer("h1", bed.Member("m1"))
		Eventually(ready(ctx, "h1")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))

		s.stop()
		stopped := time.Now()
		Eventually(ready(ctx, "h1")).WithContext(ctx).Should(withReason(metav1.ConditionFalse, workloadv1alpha1.ReasonUnreachable))
		Expect(time.Since(stopped)).To(BeNumerically(">=", grace-heartbeatPeriod), "Unreachable before the grace ran out")

		s.start()
		Eventually(ready(ctx, "h1")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
		Eventually(func() []string { return eventReasons(ctx, "h1") }).WithContext(ctx).
			Should(ContainElements(workloadv1alpha1.ReasonHeartbeating, workloadv1alpha1.ReasonUnreachable))
	})

	It("keeps a target Ready through a hub outage longer than the grace when its syncer beats within the grace of the hub's return", func(ctx SpecContext) {
		createSyncTarget(ctx, "h3")
		s := startSyncer("h3", bed.Member("m1"))
		Eventually(ready(ctx, "h3")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
		c, err := ready(ctx, "h3")()
		Expect(err).NotTo(HaveOccurred())
		readySince := c.LastTransitionTime

		s.stop()
		Expect(bed.Hub.StopAPIServer()).To(Succeed())
		// Past the grace: once the hub answers, the Lease is older than the grace.
		time.Sleep(grace + heartbeatPeriod)
		Expect(bed.Hub.StartAPIServer(ctx)).To(Succeed())
		// The syncer beats again within the grace of the hub's return, not of its last beat: it
		// starts as the hub answers, and its first beat follows its start (caches, report).
		s.start()
		Eventually(func(g Gomega) {
			g.Expect(leaseOf(ctx, g, "h3").Spec.RenewTime.Time).To(BeTemporally(">", readySince.Time.Add(grace)))
		}).WithContext(ctx).Should(Succeed())
		st := &workloadv1alpha1.SyncTarget{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: "h3"}, st)).To(Succeed())
		c = meta.FindStatusCondition(st.Status.Conditions, workloadv1alpha1.ConditionReady)
		Expect(c).To(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
		Expect(c.LastTransitionTime).To(Equal(readySince), "h3 was not Ready for a while")
		Expect(eventReasons(ctx, "h3")).NotTo(ContainElement(workloadv1alpha1.ReasonUnreachable))
	})

	It("reports a target whose syncer never ran as NeverSeen", func(ctx SpecContext) {
		createSyncTarget(ctx, "h2")
		Eventually(ready(ctx, "h2")).WithContext(ctx).Should(withReason(metav1.ConditionFalse, workloadv1alpha1.ReasonNeverSeen))
		Consistently(ready(ctx, "h2")).WithContext(ctx).WithTimeout(time.Second).
			Should(withReason(metav1.ConditionFalse, workloadv1alpha1.ReasonNeverSeen))
		st := &workloadv1alpha1.SyncTarget{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: "h2"}, st)).To(Succeed())
		Expect(st.Status.Key).To(Equal("h2"))
		err := bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: "h2"}, &coordinationv1.Lease{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want no Lease, got %v", err)
		Eventually(func() []string { return eventReasons(ctx, "h2") }).WithContext(ctx).Should(ContainElement(workloadv1alpha1.ReasonNeverSeen))
	})
})
