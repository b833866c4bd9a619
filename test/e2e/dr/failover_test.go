package dr

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// downNamespace is the namespace a member holds the hub namespace ns in.
func downNamespace(ctx context.Context, key, ns string) string {
	GinkgoHelper()
	kubeSystem := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem)).To(Succeed())
	return transform.Target{Key: key, Hub: string(kubeSystem.UID)}.Namespace(ns)
}

var _ = Describe("A LocationPair's failover", func() {
	It("restores each volume, owned or shared, from its latest replica when the primary is lost; the old primary comes back clean, and the pair protects the other way", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		// A workload on it: the failover completes once it is ready on the secondary, while
		// the primary, still lost, cannot let go of it.
		Expect(hub.Create(ctx, database(ns))).To(Succeed())
		shared := claimOf(ns, "shared", nil)
		shared.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
		svo, spv := bound(ctx, shared, "m1")
		Expect(svo.Status.Class).To(Equal(storagev1alpha1.Shared))
		scratch := claimOf(ns, "scratch", nil)
		scratch.Labels = map[string]string{storagev1alpha1.ProtectLabel: "false"}
		xvo, _ := bound(ctx, scratch, "m1")
		old, sharedOld := pv.Spec.CSI.VolumeHandle, spv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		replicated := write(ctx, east, "m1", old, "before", 3)
		sharedReplicated := write(ctx, east, "m1", sharedOld, "shared", 2)

		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1d",
			FailoverThreshold: &metav1.Duration{Duration: 5 * time.Second}}, vo, svo)
		replica, sharedReplica := *vo.Status.Replica, *svo.Status.Replica
		By("leaving the claim labelled out of the pair's protection unreplicated, and saying so on its record")
		Eventually(func(g Gomega) *metav1.Condition {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(xvo), xvo)).To(Succeed())
			return meta.FindStatusCondition(xvo.Status.Conditions, storagev1alpha1.ConditionReplicated)
		}).WithContext(ctx).Should(And(HaveField("Status", metav1.ConditionFalse), HaveField("Reason", schedulingv1alpha1.ReasonNotProtected)))
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "scratch"}, &storagev1alpha1.VolumeReplication{}))).To(BeTrue())
		oldest := replica.Time
		if sharedReplica.Time.Before(&oldest) {
			oldest = sharedReplica.Time
		}

		By("writing after the last replicas: the failover loses these, as the pair's interval allows")
		late := write(ctx, east, "m1", old, "after", 2)
		sharedLate := write(ctx, east, "m1", sharedOld, "after", 1)

		By("losing the primary: both of its members")
		stopMembers("m1", "m3")
		lostAt := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			a := pair.Status.LastAction
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Mode).To(Equal(schedulingv1alpha1.Failover))
			g.Expect(a.Automatic).To(BeTrue())
			g.Expect(a.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted), "%s since %s", a.Progression, a.ProgressionTime)
			g.Expect(pair.Status.ActiveLocation).To(Equal("west"))
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairFailedOver))
			g.Expect(a.OldestReplicaTime).NotTo(BeNil())
			g.Expect(a.OldestReplicaTime.Time).To(BeTemporally("==", oldest.Time))
		}).WithContext(ctx).Should(Succeed())
		GinkgoWriter.Printf("failed over %s after the primary was lost, in %s from the failover's start\n",
			time.Since(lostAt).Round(time.Millisecond), pair.Status.LastAction.Duration.Duration)

		By("recording the failover in the pair's history, with what it cost")
		Expect(pair.Status.History).To(HaveLen(1))
		h := pair.Status.History[0]
		GinkgoWriter.Printf("history: %s; the loss timed %s from the stop, steps %v\n", h.Summary(), h.TriggerTime.Sub(lostAt).Round(time.Millisecond), h.Steps)
		Expect(h.Trigger).To(Equal(schedulingv1alpha1.TriggerLocationLost))
		// The API keeps times to the second, and the members' last heartbeats came at most a
		// heartbeat period before the stop.
		Expect(h.TriggerTime.Time).To(BeTemporally("~", lostAt, 3*time.Second), "the loss is timed from the members' last heartbeats")
		Expect(h.TriggerTime.Time).To(BeTemporally("<", h.StartTime.Time), "the failover starts a threshold after the loss")
		Expect(h.RecoveryTime.Duration).To(BeNumerically("~", h.CompletionTime.Sub(h.TriggerTime.Time), time.Second))
		Expect(h.RecoveryPoint.Duration).To(Equal(h.TriggerTime.Sub(oldest.Time)))
		Expect([]int32{h.Restored, h.SetAside, h.Waiting}).To(Equal([]int32{2, 2, 1}), "scratch, not protected, waits")
		Expect(h.Steps).To(HaveEach(HaveField("Time.Time", BeTemporally(">=", h.StartTime.Time))))
		Expect(h.Steps[len(h.Steps)-1].Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(xvo), xvo)).To(Succeed())
		Expect([]string{string(xvo.Status.Phase), xvo.Status.Reason, xvo.Status.Owner}).To(Equal([]string{string(storagev1alpha1.Pending), storagev1alpha1.ReasonNotProtected, "m1"}),
			"the claim not protected waits where its data is: %s", xvo.Status.Message)
		Eventually(func(g Gomega) {
			g.Expect(metrics(ctx, g)).To(ContainSubstring(`custody_pair_last_recovery_point_seconds{mode="Failover",pair="%s"} %s`, pair.Name,
				strconv.FormatFloat(h.RecoveryPoint.Seconds(), 'g', -1, 64)))
		}).WithContext(ctx).Should(Succeed())

		By("bringing each volume back on the secondary from its replica, and setting the old one aside")
		restored := map[string]string{}
		for _, c := range []struct {
			vo      *storagev1alpha1.VolumeOwnership
			replica storagev1alpha1.Replica
			old     string
			records []string
		}{{vo, replica, old, replicated}, {svo, sharedReplica, sharedOld, sharedReplicated}} {
			Expect(hub.Get(ctx, client.ObjectKeyFromObject(c.vo), c.vo)).To(Succeed())
			st := c.vo.Status
			Expect(st.Phase).To(Equal(storagev1alpha1.Bound), c.vo.Name)
			Expect(st.Owner).To(Equal("m2"), c.vo.Name)
			Expect(st.Domain).To(Equal("west"), c.vo.Name)
			Expect(st.RestoredFrom).NotTo(BeNil(), c.vo.Name)
			Expect(st.RestoredFrom.Snapshot).To(Equal(c.replica.Snapshot), c.vo.Name)
			Expect(st.RestoredFrom.Time.Time).To(BeTemporally("==", c.replica.Time.Time), c.vo.Name)
			Expect(st.SetAside).NotTo(BeNil(), c.vo.Name)
			Expect(st.SetAside.VolumeHandle).To(Equal(c.old), c.vo.Name)
			Expect(st.SetAside.Target).To(Equal("m1"), c.vo.Name)
			Expect(st.SetAside.Domain).To(Equal("east"), c.vo.Name)
			Expect(hub.Get(ctx, client.ObjectKey{Name: st.VolumeName}, pv)).To(Succeed())
			h := pv.Spec.CSI.VolumeHandle
			Expect(h).NotTo(Equal(c.old))
			Expect(west.Records(h)).To(Equal(c.records), "%s: the restored volume holds exactly its replica's writes", c.vo.Name)
			down := downNamespace(ctx, "m2", ns)
			claimCopy, snap := &corev1.PersistentVolumeClaim{}, &snapshotv1.VolumeSnapshot{}
			Expect(env.Member("m2").Client.Get(ctx, client.ObjectKey{Namespace: down, Name: c.vo.Name}, claimCopy)).To(Succeed())
			Expect(env.Member("m2").Client.Get(ctx, client.ObjectKey{Namespace: down, Name: c.replica.Snapshot}, snap)).To(Succeed())
			Expect(snap.Labels).To(HaveKey(transform.KeepLabel), "%s: the replica restored from is kept from VolSync's rotation", c.vo.Name)
			Expect(snap.OwnerReferences).To(ContainElement(HaveField("UID", claimCopy.UID)), "%s: the replica goes with the claim's copy", c.vo.Name)
			write(ctx, west, "m2", h, "restored", 1)
			restored[c.vo.Name] = h
		}
		Expect(svo.Status.Class).To(Equal(storagev1alpha1.Shared))
		Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeFalse())

		By("bringing the old primary back: it removes its copies, keeps the set-aside storage, and is unfenced; the pair then protects from the secondary")
		back := time.Now()
		for _, m := range []string{"m1", "m3"} {
			Expect(env.StartMember(ctx, m)).To(Succeed())
		}
		started := time.Since(back)
		var lifted time.Duration
		// The pair protects again as soon as a member of the old primary takes the replicas,
		// which may be before the other one returned clean.
		var protecting time.Time
		// The claim left waiting keeps its copy on m1, which reports clean, and is unfenced,
		// only once the claim goes: the admin here lets it go, through m1, and starts it
		// empty if need be.
		Expect(hub.Delete(ctx, scratch)).To(Succeed())
		framework.Gone(ctx, hub, scratch)
		m1 := env.Member("m1").Client
		Eventually(func(g Gomega) {
			if lifted == 0 && len(fencesOf(ctx, "m1", "m3")) == 0 {
				lifted = time.Since(back)
			}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			if protecting.IsZero() && pair.Status.Phase == schedulingv1alpha1.PairProtecting {
				protecting = time.Now()
			}
			for _, claim := range []string{"data", "shared"} {
				copied := &corev1.PersistentVolumeClaim{}
				err := m1.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m1", ns), Name: claim}, copied)
				if err == nil {
					g.Expect(err).To(HaveOccurred(), "m1 keeps its copy of claim %s: %s", claim, keptCopy(ctx, m1, ns, copied))
				}
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "reading m1's copy of claim %s: %v", claim, err)
			}
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting), "%v; the old primary: %v", pair.Status.Conditions, targetConditions(ctx, "m1", "m3"))
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeTrue())
			for _, claim := range []string{"data", "shared"} {
				vr := &storagev1alpha1.VolumeReplication{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, vr)).To(Succeed())
				g.Expect(vr.Spec.Source).To(Equal("m2"))
				g.Expect(vr.Spec.Destination).To(BeElementOf("m1", "m3"))
			}
		}).WithContext(ctx).WithPolling(100 * time.Millisecond).Should(Succeed())
		Expect(pair.Status.History).To(HaveLen(1))
		again := pair.Status.History[0].ProtectedAgain
		Expect(again).NotTo(BeNil(), "the history does not say when the pair protected again")
		Expect(again.Duration).To(BeNumerically("~", protecting.Sub(pair.Status.History[0].CompletionTime.Time), 2*time.Second))
		// The return is when a member of east could take replicas again: started, clean and
		// unfenced, which the history tells to the second.
		h = pair.Status.History[0]
		Expect(h.ReturnTime).NotTo(BeNil(), "the history does not say when east returned")
		Expect(h.ReturnTime.Time).To(BeTemporally(">=", back.Truncate(time.Second)))
		Expect(h.ReturnTime.Time).To(BeTemporally("<=", protecting))
		Expect(h.ReturnSync).NotTo(BeNil(), "the history does not say how long the sync back took")
		AddReportEntry("the old primary's return", ReportEntryVisibilityAlways, fmt.Sprintf("both members started in %s; the pair Protecting again %s after (%s after the failover completed, %s after east could take replicas again, the longest sync %s, as its history records), their Fences lifted %s after, and all done %s after",
			started.Round(100*time.Millisecond), protecting.Sub(back).Round(100*time.Millisecond), again.Round(100*time.Millisecond),
			h.ProtectedAfterReturn().Round(100*time.Millisecond), h.ReturnSync.Round(100*time.Millisecond), lifted.Round(100*time.Millisecond), time.Since(back).Round(100*time.Millisecond)))
		for h, records := range map[string][]string{old: append(replicated, late...), sharedOld: append(sharedReplicated, sharedLate...)} {
			v, ok := east.Volume(h)
			Expect(ok).To(BeTrue())
			Expect(v.Deleted.IsZero()).To(BeTrue(), "the set-aside volume %s was released", h)
			Expect(east.Records(h)).To(Equal(records))
			Expect(east.LostWrites(h)).To(BeEmpty())
		}
		noFencesOf(ctx, "m1", "m3")
		for _, h := range restored {
			Expect(west.LostWrites(h)).To(BeEmpty())
		}
	})
})

// keptCopy describes a copy that a member keeps, the pods beside it, and the hub's
// namespace and claim it follows, for the message of a spec that waits for it to go.
func keptCopy(ctx context.Context, member client.Client, ns string, copied *corev1.PersistentVolumeClaim) string {
	hubNS, claim, pods := &corev1.Namespace{}, &corev1.PersistentVolumeClaim{}, &corev1.PodList{}
	_ = hub.Get(ctx, client.ObjectKey{Name: ns}, hubNS)
	_ = hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: copied.Name}, claim)
	_ = member.List(ctx, pods, client.InNamespace(copied.Namespace))
	var beside []string
	for _, p := range pods.Items {
		beside = append(beside, fmt.Sprintf("%s (%s on %q, deleted %v, finalizers %v)", p.Name, p.Status.Phase, p.Spec.NodeName, p.DeletionTimestamp, p.Finalizers))
	}
	return fmt.Sprintf("the copy: deleted %v, finalizers %v, labels %v, annotations %v; its pods: %v; the hub namespace: labels %v, annotations %v; the hub claim: labels %v, annotations %v",
		copied.DeletionTimestamp, copied.Finalizers, copied.Labels, copied.Annotations, beside, hubNS.Labels, hubNS.Annotations, claim.Labels, claim.Annotations)
}

// noFencesOf fails if a Fence of any of the targets is left.
func noFencesOf(ctx context.Context, targets ...string) {
	GinkgoHelper()
	Expect(fencesOf(ctx, targets...)).To(BeEmpty(), "Fences are left")
}

// fencesOf are the names of the Fences of any of the targets.
func fencesOf(ctx context.Context, targets ...string) []string {
	GinkgoHelper()
	fences := &storagev1alpha1.FenceList{}
	Expect(hub.List(ctx, fences)).To(Succeed())
	var out []string
	for _, f := range fences.Items {
		if slices.Contains(targets, f.Spec.TargetName) {
			out = append(out, f.Name)
		}
	}
	return out
}

// stopMembers stops the members, and starts again after the spec those still stopped.
func stopMembers(names ...string) {
	GinkgoHelper()
	for _, m := range names {
		Expect(env.StopMember(m, false)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			if s, _ := env.MemberStatus(m); !s.Syncer {
				Expect(env.StartMember(ctx, m)).To(Succeed())
			}
		})
	}
}

// targetConditions are the conditions of the SyncTargets, by name.
func targetConditions(ctx context.Context, names ...string) map[string][]metav1.Condition {
	out := map[string][]metav1.Condition{}
	for _, n := range names {
		t := &workloadv1alpha1.SyncTarget{}
		if hub.Get(ctx, client.ObjectKey{Name: n}, t) == nil {
			out[n] = t.Status.Conditions
		}
	}
	return out
}
