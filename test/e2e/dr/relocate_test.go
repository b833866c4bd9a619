package dr

import (
	"context"
	"regexp"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// usersOf are the pods of the member's namespace that use the claim.
func usersOf(ctx context.Context, member client.Client, ns, claim string) []string {
	GinkgoHelper()
	pods := &corev1.PodList{}
	Expect(member.List(ctx, pods, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, p := range pods.Items {
		for _, v := range p.Spec.Volumes {
			if c := v.PersistentVolumeClaim; c != nil && c.ClaimName == claim {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

var _ = Describe("A LocationPair's relocate", func() {
	It("stops the workloads, syncs a last time, and restores every volume from that sync on the other Location, losing no write, through controller restarts at each step", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		old := pv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		m1, m2 := env.Member("m1").Client, env.Member("m2").Client
		Expect(hub.Create(ctx, database(ns))).To(Succeed())
		Eventually(func() []string { return usersOf(ctx, m1, downNamespace(ctx, "m1", ns), "data") }).WithContext(ctx).ShouldNot(BeEmpty())
		written := write(ctx, east, "m1", old, "before", 3)

		pair := pairOf(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "5m"})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		scheduled := *vo.Status.Replica
		By("writing after the last scheduled replica: a relocate keeps these")
		written = append(written, write(ctx, east, "m1", old, "after", 2)...)

		By("asking before a switch: unconfirmed, kubectl custody failover changes nothing")
		code, out, errOut := env.Custody(ctx, "failover", ns)
		Expect(code).NotTo(Equal(0))
		Expect(out).To(ContainSubstring("Fail locationpair/%s over from east to west? Its volumes (1) come back from their replicas", ns))
		Expect(errOut).To(ContainSubstring("not confirmed: locationpair/%s is unchanged", ns))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		Expect(pair.Spec.ActiveLocation).To(BeEmpty())

		By("relocating with kubectl custody, the controller restarted at each step")
		Expect(custody(ctx, "relocate", ns, "--yes", "--wait=false")).To(ContainSubstring("locationpair/%s: relocate to west asked", ns))
		steps := followRestarting(ctx, pair, func(string) {})
		Expect(steps).To(ContainElements(schedulingv1alpha1.ProgressionQuiescing, schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionCompleted))
		a := pair.Status.LastAction
		Expect(a.Mode).To(Equal(schedulingv1alpha1.Relocate))
		Expect(a.Automatic).To(BeFalse())
		Expect(pair.Status.ActiveLocation).To(Equal("west"))
		GinkgoWriter.Printf("relocated in %s\n", pair.Status.LastAction.Duration.Duration)

		By("restoring the volume on the secondary from the last sync, with every write")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		Expect(vo.Status.Owner).To(Equal("m2"))
		Expect(vo.Status.RestoredFrom).NotTo(BeNil())
		// Replica times have a resolution of a second: the last sync is another snapshot, not older.
		Expect(vo.Status.RestoredFrom.Snapshot).NotTo(Equal(scheduled.Snapshot), "restored from the scheduled replica, not from the last sync")
		Expect(vo.Status.RestoredFrom.Time.Before(&scheduled.Time)).To(BeFalse(), "restored from %+v, older than %+v", vo.Status.RestoredFrom, scheduled)
		Expect(vo.Status.SetAside.VolumeHandle).To(Equal(old))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(west.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(written), "the relocate lost writes")

		By("running the workload on the secondary, and no longer on the primary")
		// The controller writes the completed step before it acts on it: the quiesce is lifted
		// right after.
		Eventually(func(g Gomega) {
			namespace := &corev1.Namespace{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, namespace)).To(Succeed())
			g.Expect(namespace.Annotations).NotTo(HaveKey(schedulingv1alpha1.QuiesceAnnotation))
		}).WithContext(ctx).Should(Succeed())
		Eventually(func() []string { return usersOf(ctx, m2, downNamespace(ctx, "m2", ns), "data") }).WithContext(ctx).ShouldNot(BeEmpty())
		Eventually(func() bool {
			err := m1.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m1", ns), Name: "db"}, &appsv1.Deployment{})
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).Should(BeTrue())
		Expect(usersOf(ctx, m1, downNamespace(ctx, "m1", ns), "data")).To(BeEmpty())
		v, ok := east.Volume(old)
		Expect(ok).To(BeTrue())
		Expect(v.Deleted.IsZero()).To(BeTrue(), "the set-aside volume was released")
		Expect(east.LostWrites(old)).To(BeEmpty())
		Expect(west.LostWrites(pv.Spec.CSI.VolumeHandle)).To(BeEmpty())

		By("relocating back once the pair protects from the secondary: the volume comes back with every write, and its record keeps both volumes set aside")
		moved := pv.Spec.CSI.VolumeHandle
		written = append(written, write(ctx, west, "m2", moved, "west", 2)...)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting), "replica %+v; replication %+v, source %+v, destination %+v", vo.Status.Replica, vr.Spec, ptr.Deref(vr.Status.Source, storagev1alpha1.ReplicationSourceStatus{}), ptr.Deref(vr.Status.Destination, storagev1alpha1.ReplicationDestinationStatus{}))
		}).WithContext(ctx).Should(Succeed())
		code, out, errOut = env.Custody(ctx, "relocate", ns, "--yes")
		GinkgoWriter.Printf("$ kubectl custody relocate %s --yes\n%s%s", ns, out, errOut)
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("locationpair/%s: relocate to east asked", ns))
		Expect(out).To(MatchRegexp(`locationpair/%s: Relocate from west to east \(Declared\) completed in \S+, losing at most 0s of writes; volumes restored 1`, ns),
			"the command follows the relocate until it completes")
		Expect(errOut).To(MatchRegexp(`(?m)^\[\d+s\] (Quiescing|FinalSync|Restoring): `), "the command says the steps it sees")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(pair.Status.ActiveLocation).To(Equal("east"), "the relocate back: %+v; conditions %+v", pair.Status.LastAction, pair.Status.Conditions)
			nsObj := &corev1.Namespace{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, nsObj)).To(Succeed())
			claimObj := &corev1.PersistentVolumeClaim{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), claimObj)).To(Succeed())
			g.Expect(pair.Status.LastAction.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted), "the volume: %s/%s: %s; ns %v %v; claim %v %v", vo.Status.Phase, vo.Status.Reason, vo.Status.Message, nsObj.Labels, nsObj.Annotations, claimObj.Labels, claimObj.Annotations)
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		}).WithContext(ctx).Should(Succeed())
		Expect(vo.Status.SetAside.VolumeHandle).To(Equal(moved))
		Expect(vo.Status.EarlierSetAside).To(ConsistOf(HaveField("VolumeHandle", old)))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		Expect(east.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(written), "the relocate back lost writes")

		By("counting the relocate back, and exposing its duration, as metrics")
		Expect(pair.Status.LastAction.Duration).NotTo(BeNil())
		Eventually(func(g Gomega) {
			body := metrics(ctx, g)
			// The controller that started the relocate back runs on: it counted it.
			g.Expect(body).To(MatchRegexp(`(?m)^custody_pair_switches_total\{automatic="false",mode="Relocate",pair="%s"\} [1-9]`, ns))
			g.Expect(body).To(ContainSubstring(`custody_pair_last_switch_duration_seconds{mode="Relocate",pair="%s"} %s`, ns,
				strconv.FormatFloat(pair.Status.LastAction.Duration.Seconds(), 'g', -1, 64)))
			g.Expect(body).To(ContainSubstring(`custody_pair_last_recovery_point_seconds{mode="Relocate",pair="%s"} 0`, ns))
		}).WithContext(ctx).Should(Succeed())

		By("recording both relocates in the pair's history, declared and losing nothing")
		Expect(pair.Status.History).To(HaveLen(2))
		for _, h := range pair.Status.History {
			Expect(h.Trigger).To(Equal(schedulingv1alpha1.TriggerDeclared))
			Expect(h.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted))
			Expect(h.RecoveryPoint.Duration).To(BeZero())
			Expect(h.RecoveryTime.Duration).To(BeNumerically("~", h.CompletionTime.Sub(h.TriggerTime.Time), time.Second), "the API keeps times to the second")
		}
		Expect(pair.Status.History[1].StartTime).To(Equal(pair.Status.LastAction.StartTime))
		history := custody(ctx, "history", ns, "-o", "wide")
		GinkgoWriter.Print(history)
		Expect(regexp.MustCompile(`(?m)^\S+\s+Relocate\s+(east\s+west|west\s+east)\s+Declared\s+Completed\s+\S+\s+0s\s+1\s+`).FindAllString(history, -1)).To(HaveLen(2))
	})
})
