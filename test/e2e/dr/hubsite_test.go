package dr

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

var _ = Describe("A LocationPair whose primary is lost with the hub's site", func() {
	It("fails over on the hub's other site once the other controller replica leads, losing no write older than the replica and releasing nothing; the site returns clean", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		old := pv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		replicated := write(ctx, east, "m1", old, "before", 3)
		const threshold = 5 * time.Second
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1d",
			FailoverThreshold: &metav1.Duration{Duration: threshold}}, vo)
		late := write(ctx, east, "m1", old, "after", 2)
		leader, _, err := env.ControllerLeader(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(leader).NotTo(BeEmpty())

		By("losing site-1: east's members, the first API server and etcd member, and the leading controller replica")
		lost := time.Now()
		Expect(env.StopSite("site-1")).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			if env.Hub.SiteDown("site-1") {
				Expect(env.StartSite(ctx, "site-1")).To(Succeed())
			}
		})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			a := pair.Status.LastAction
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Mode).To(Equal(schedulingv1alpha1.Failover))
			g.Expect(a.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted), "%s since %s", a.Progression, a.ProgressionTime)
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairFailedOver))
		}).WithContext(ctx).WithPolling(100 * time.Millisecond).Should(Succeed())
		failedOver := time.Since(lost)
		lease, err := env.ControllerLease(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(lease.Spec.HolderIdentity).NotTo(HaveValue(Equal(leader)), "the replica lost with site-1 still leads")
		Expect(lease.Spec.AcquireTime).NotTo(BeNil())
		// The pair waited its threshold from the loss, and started within seconds of both the
		// threshold and the hand-over: the lead's move adds to the threshold only where it
		// took longer.
		a := pair.Status.LastAction
		Expect(a.TriggerTime).NotTo(BeNil())
		due := a.TriggerTime.Add(threshold)
		Expect(a.StartTime.Time).NotTo(BeTemporally("<", due))
		if lease.Spec.AcquireTime.After(due) {
			due = lease.Spec.AcquireTime.Time
		}
		Expect(a.StartTime.Time).To(BeTemporally("<=", due.Add(5*time.Second)))
		AddReportEntry("the hub's site lost with the primary", ReportEntryVisibilityAlways, fmt.Sprintf(
			"from the loss: the lead handed over after %s (the Lease's acquisition; it lasts %ds); the loss detected at %s; the failover started at %s (threshold %s); FailedOver at %s; the history: %s",
			lease.Spec.AcquireTime.Sub(lost).Round(100*time.Millisecond), ptr.Deref(lease.Spec.LeaseDurationSeconds, 0), a.TriggerTime.Sub(lost).Round(100*time.Millisecond),
			a.StartTime.Sub(lost).Round(100*time.Millisecond), threshold, failedOver.Round(100*time.Millisecond), pair.Status.History[len(pair.Status.History)-1].Summary()))

		By("restoring the volume on west from its replica: every replicated write, nothing released")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Owner).To(Equal("m2"))
		Expect(vo.Status.SetAside).NotTo(BeNil())
		Expect(vo.Status.SetAside.VolumeHandle).To(Equal(old))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(west.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(replicated))

		By("bringing site-1 back: its etcd member rejoins, east's members come back clean and unfenced, and the pair protects from west")
		Expect(env.StartSite(ctx, "site-1")).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
			g.Expect(fencesOf(ctx, "m1", "m3")).To(BeEmpty())
			copied := &corev1.PersistentVolumeClaim{}
			err := env.Member("m1").Client.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m1", ns), Name: "data"}, copied)
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "m1 keeps its copy: %v", err)
		}).WithContext(ctx).Should(Succeed())
		v, ok := east.Volume(old)
		Expect(ok).To(BeTrue())
		Expect(v.Deleted.IsZero()).To(BeTrue(), "the set-aside volume was released")
		Expect(east.Records(old)).To(Equal(append(replicated, late...)))
		Expect(east.LostWrites(old)).To(BeEmpty())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
	})
})
