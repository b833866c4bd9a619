package dr

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/coordination/dr"
)

// downNamespace is the namespace a member holds the hub namespace ns in.
func downNamespace(ctx context.Context, key, ns string) string {
	GinkgoHelper()
	kubeSystem := &corev1.Namespace{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, kubeSystem)).To(Succeed())
	return transform.Target{Key: key, Hub: string(kubeSystem.UID)}.Namespace(ns)
}

var _ = Describe("A LocationPair's failover", func() {
	It("restores each volume from its latest replica when the primary is lost; the old primary comes back clean, and the pair protects the other way", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		old := pv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		replicated := write(ctx, east, "m1", old, "before", 3)

		pair := &schedulingv1alpha1.LocationPair{
			ObjectMeta: metav1.ObjectMeta{Name: ns},
			Spec: schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "5m",
				FailoverThreshold: &metav1.Duration{Duration: 5 * time.Second}},
		}
		Expect(hub.Create(ctx, pair)).To(Succeed())
		DeferCleanup(func(ctx context.Context) { Expect(client.IgnoreNotFound(hub.Delete(ctx, pair))).To(Succeed()) })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica).NotTo(BeNil())
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
			g.Expect(pair.Status.ProtectedVolumes).To(Equal(int32(1)))
		}).WithContext(ctx).Should(Succeed())
		replica := *vo.Status.Replica

		By("writing after the last replica: the failover loses these, as the pair's interval allows")
		late := write(ctx, east, "m1", old, "after", 2)

		By("losing the primary")
		Expect(env.StopMember("m1", false)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			if s, _ := env.MemberStatus("m1"); !s.Syncer {
				Expect(env.StartMember(ctx, "m1")).To(Succeed())
			}
		})
		lostAt := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			a := pair.Status.LastAction
			g.Expect(a).NotTo(BeNil())
			g.Expect(a.Mode).To(Equal(schedulingv1alpha1.Failover))
			g.Expect(a.Automatic).To(BeTrue())
			g.Expect(a.Progression).To(Equal(dr.Completed), "%s since %s", a.Progression, a.ProgressionTime)
			g.Expect(pair.Status.ActiveLocation).To(Equal("west"))
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairFailedOver))
			g.Expect(a.OldestReplicaTime).NotTo(BeNil())
			g.Expect(a.OldestReplicaTime.Time).To(BeTemporally("==", replica.Time.Time))
		}).WithContext(ctx).Should(Succeed())
		GinkgoWriter.Printf("failed over %s after the primary was lost, in %s from the failover's start\n",
			time.Since(lostAt).Round(time.Millisecond), pair.Status.LastAction.Duration.Duration)

		By("bringing the volume back on the secondary from the replica, and setting the old one aside")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		Expect(vo.Status.Owner).To(Equal("m2"))
		Expect(vo.Status.Domain).To(Equal("west"))
		Expect(vo.Status.RestoredFrom).NotTo(BeNil())
		Expect(vo.Status.RestoredFrom.Snapshot).To(Equal(replica.Snapshot))
		Expect(vo.Status.RestoredFrom.Time.Time).To(BeTemporally("==", replica.Time.Time))
		Expect(vo.Status.SetAside).NotTo(BeNil())
		Expect(vo.Status.SetAside.VolumeHandle).To(Equal(old))
		Expect(vo.Status.SetAside.Target).To(Equal("m1"))
		Expect(vo.Status.SetAside.Domain).To(Equal("east"))
		Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
		restored := pv.Spec.CSI.VolumeHandle
		Expect(restored).NotTo(Equal(old))
		Expect(west.Records(restored)).To(Equal(replicated), "the restored volume holds the replica's writes")
		write(ctx, west, "m2", restored, "restored", 1)
		Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeFalse())

		By("bringing the old primary back: it removes its copies, keeps the set-aside storage, and is unfenced; the pair then protects from the secondary")
		Expect(env.StartMember(ctx, "m1")).To(Succeed())
		m1 := env.Member("m1").Client
		Eventually(func(g Gomega) {
			err := m1.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m1", ns), Name: "data"}, &corev1.PersistentVolumeClaim{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "m1 keeps its copy of the claim: %v", err)
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeTrue())
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, vr)).To(Succeed())
			g.Expect([]string{vr.Spec.Source, vr.Spec.Destination}).To(Equal([]string{"m2", "m1"}))
		}).WithContext(ctx).Should(Succeed())
		v, ok := east.Volume(old)
		Expect(ok).To(BeTrue())
		Expect(v.Deleted.IsZero()).To(BeTrue(), "the set-aside volume was released")
		Expect(east.Records(old)).To(Equal(append(replicated, late...)))
		fences := &storagev1alpha1.FenceList{}
		Expect(hub.List(ctx, fences)).To(Succeed())
		for _, f := range fences.Items {
			Expect(f.Spec.TargetName).NotTo(Equal("m1"), "Fence %s of m1 is left", f.Name)
		}
		Expect(east.LostWrites(old)).To(BeEmpty())
		Expect(west.LostWrites(restored)).To(BeEmpty())
	})
})
