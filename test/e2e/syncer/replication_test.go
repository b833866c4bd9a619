package syncer

import (
	"context"
	"fmt"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/simstorage"
)

var _ = Describe("Replication", Ordered, func() {
	var (
		hub, m1, m2 client.Client
		storage     *simstorage.Storage
		ns          string
		vr          *storagev1alpha1.VolumeReplication
		handle      string
		written     []string
	)

	// write writes n records as m1, the owner, each acknowledged.
	write := func(n int) {
		GinkgoHelper()
		for range n {
			record := fmt.Sprintf("record %d", len(written))
			Eventually(func() error { return storage.Write("m1", handle, record) }).Should(Succeed())
			written = append(written, record)
		}
	}

	// image waits until the destination reports a ready latest image newer than after, and
	// returns the log the snapshot holds.
	image := func(ctx context.Context, after string) []string {
		GinkgoHelper()
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
			d := vr.Status.Destination
			g.Expect(d).NotTo(BeNil())
			g.Expect(d.ReportedBy).To(Equal("m2"))
			g.Expect(d.LatestImage).NotTo(BeElementOf("", after))
			g.Expect(d.LatestImageReady).To(BeTrue())
			g.Expect(d.LatestImageTime).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		log, ok := storage.Snapshot("m2", targetOf("m2").Namespace(ns), vr.Status.Destination.LatestImage)
		Expect(ok).To(BeTrue(), "the storage did not cut the snapshot the destination reports")
		return log
	}

	BeforeAll(func(ctx SpecContext) {
		hub, m1, m2, storage = bed.Hub.Client, bed.Member("m1").Client, bed.Member("m2").Client, bed.Storage("shared")
		ns = hubNamespace(ctx, "m1")
		claim := claimFor(ns, "data", corev1.ReadWriteOnce, "m1")
		Expect(hub.Create(ctx, claim)).To(Succeed())
		down := boundClaim(ctx, m1, downKey("m1", claim))
		pv := &corev1.PersistentVolume{}
		Expect(m1.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, pv)).To(Succeed())
		handle = pv.Spec.CSI.VolumeHandle

		// The pairs' keys live in Custody's namespace, which an installed hub has.
		keys := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.KeyNamespace}}
		Expect(client.IgnoreAlreadyExists(hub.Create(ctx, keys))).To(Succeed())
		key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: storagev1alpha1.KeyNamespace, Name: "custody-pair-e2e"},
			Data: map[string][]byte{"psk.txt": []byte("volsync:0123456789abcdef0123456789abcdef")}}
		Expect(client.IgnoreAlreadyExists(hub.Create(ctx, key))).To(Succeed())
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Delete(ctx, key))).To(Succeed()) })
	})

	It("runs VolSync from the owner to the destination and reports a ready snapshot of the data", func(ctx SpecContext) {
		write(3)
		vr = &storagev1alpha1.VolumeReplication{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data", Labels: synced(nil, "m1", "m2")},
			Spec: storagev1alpha1.VolumeReplicationSpec{Pair: "e2e", Source: workloadv1alpha1.ToSyncTargetKey("m1"),
				Destination: workloadv1alpha1.ToSyncTargetKey("m2"), Schedule: "*/5 * * * *", KeySecret: "custody-pair-e2e"},
		}
		Expect(hub.Create(ctx, vr)).To(Succeed())

		By("giving the destination, in the namespace the claim would be restored in, a ReplicationDestination with the claim's shape")
		rd := &volsyncv1alpha1.ReplicationDestination{}
		Eventually(fetch(ctx, m2, client.ObjectKey{Namespace: targetOf("m2").Namespace(ns), Name: "custody-data"}, rd)).WithContext(ctx).Should(Succeed())
		Expect(rd.Spec.RsyncTLS).NotTo(BeNil())
		Expect(rd.Spec.RsyncTLS.CopyMethod).To(Equal(volsyncv1alpha1.CopyMethodSnapshot))
		Expect(*rd.Spec.RsyncTLS.StorageClassName).To(Equal("shared"))
		Expect(rd.Spec.RsyncTLS.AccessModes).To(ConsistOf(corev1.ReadWriteOnce))
		Expect(rd.Spec.Trigger).To(BeNil(), "an rsync destination listens all the time")

		By("giving the owner a ReplicationSource of its copy of the claim, to the destination's address, on the schedule")
		rs := &volsyncv1alpha1.ReplicationSource{}
		Eventually(fetch(ctx, m1, client.ObjectKey{Namespace: targetOf("m1").Namespace(ns), Name: "custody-data"}, rs)).WithContext(ctx).Should(Succeed())
		Expect(rs.Spec.SourcePVC).To(Equal("data"))
		Expect(*rs.Spec.Trigger.Schedule).To(Equal("*/5 * * * *"))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
		Expect(*rs.Spec.RsyncTLS.Address).To(Equal(vr.Status.Destination.Address))
		Expect(*rs.Spec.RsyncTLS.Address).NotTo(BeEmpty())

		By("copying the pair's key into both members")
		for _, m := range []struct {
			name string
			c    client.Client
		}{{"m1", m1}, {"m2", m2}} {
			s := &corev1.Secret{}
			Expect(m.c.Get(ctx, client.ObjectKey{Namespace: targetOf(m.name).Namespace(ns), Name: "custody-replication-data"}, s)).To(Succeed())
			Expect(string(s.Data["psk.txt"])).To(Equal("volsync:0123456789abcdef0123456789abcdef"))
		}

		By("reporting the first sync, made at once, and the ready snapshot that holds every record written before it")
		Expect(image(ctx, "")).To(Equal(written))
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
			g.Expect(vr.Status.Source).NotTo(BeNil())
			g.Expect(vr.Status.Source.ReportedBy).To(Equal("m1"))
			g.Expect(vr.Status.Source.Result).To(Equal(string(volsyncv1alpha1.MoverResultSuccessful)))
			g.Expect(vr.Status.Source.LastSyncTime).NotTo(BeNil())
			g.Expect(vr.Status.Source.NextSyncTime).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		Expect(vr.Finalizers).To(ContainElements(workloadv1alpha1.SyncerFinalizer("m1"), workloadv1alpha1.SyncerFinalizer("m2")))
	})

	It("syncs once more on a manual trigger, and the new snapshot holds the later writes", func(ctx SpecContext) {
		before := vr.Status.Destination.LatestImage
		write(2)
		framework.Update(ctx, hub, vr, func() { vr.Spec.ManualTrigger = "final-1" })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
			g.Expect(vr.Status.Source.LastManualSync).To(Equal("final-1"))
		}).WithContext(ctx).Should(Succeed())
		Expect(image(ctx, before)).To(Equal(written))
		snap := &snapshotv1.VolumeSnapshot{}
		Expect(m2.Get(ctx, client.ObjectKey{Namespace: targetOf("m2").Namespace(ns), Name: vr.Status.Destination.LatestImage}, snap)).To(Succeed())
		Expect(*snap.Status.ReadyToUse).To(BeTrue())
	})

	It("restores a claim in the destination from the latest image when the hub claim asks for it", func(ctx SpecContext) {
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
		image := vr.Status.Destination.LatestImage
		replica, _ := storage.Snapshot("m2", targetOf("m2").Namespace(ns), image)
		// A failover places the namespace on the destination's target first: a syncer syncs
		// only objects of namespaces placed on its target.
		placed := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, placed)).To(Succeed())
		framework.Update(ctx, hub, placed, func() { placed.Labels = synced(placed.Labels, "m2") })
		restored := claimFor(ns, "restored", corev1.ReadWriteOnce, "m2")
		restored.Annotations = map[string]string{storagev1alpha1.RestoreAnnotation: workloadv1alpha1.ToSyncTargetKey("m2") + "/" + image}
		Expect(hub.Create(ctx, restored)).To(Succeed())
		down := boundClaim(ctx, m2, downKey("m2", restored))
		Expect(down.Spec.DataSourceRef).NotTo(BeNil())
		Expect(down.Spec.DataSourceRef.Kind).To(Equal("VolumeSnapshot"))
		Expect(down.Spec.DataSourceRef.Name).To(Equal(image))
		pv := &corev1.PersistentVolume{}
		Expect(m2.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, pv)).To(Succeed())
		Expect(storage.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(replica), "the restored volume is not the replica")
		Expect(replica).To(Equal(written))
		snap := &snapshotv1.VolumeSnapshot{}
		Expect(m2.Get(ctx, client.ObjectKey{Namespace: targetOf("m2").Namespace(ns), Name: image}, snap)).To(Succeed())
		Expect(snap.Labels).To(HaveKey(transform.KeepLabel), "the replica restored from is kept from VolSync's rotation")
		Expect(snap.OwnerReferences).To(ContainElement(HaveField("UID", down.UID)), "the replica goes with the claim's copy")

		By("asking for a replica the member does not have: the claim's copy waits, and an event says why")
		missing := claimFor(ns, "missing", corev1.ReadWriteOnce, "m2")
		missing.Annotations = map[string]string{storagev1alpha1.RestoreAnnotation: workloadv1alpha1.ToSyncTargetKey("m2") + "/gone"}
		Expect(hub.Create(ctx, missing)).To(Succeed())
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(hub.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", storagev1alpha1.ReasonReplicaMissing),
				HaveField("Regarding.Name", "missing"), HaveField("Note", ContainSubstring("replica gone")))))
		}).WithContext(ctx).Should(Succeed())
		Expect(m2.Get(ctx, downKey("m2", missing), &corev1.PersistentVolumeClaim{})).To(MatchError(apierrors.IsNotFound, "IsNotFound"))
		Expect(hub.Delete(ctx, missing)).To(Succeed())

		// Deleted, it leaves m2, and so does the namespace, so that the destination's namespace
		// may go with the replication.
		Expect(hub.Delete(ctx, restored)).To(Succeed())
		Eventually(framework.Deleted(ctx, m2, downKey("m2", restored), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())
		framework.Update(ctx, hub, placed, func() { workloadv1alpha1.RequestRemoval(placed, workloadv1alpha1.ToSyncTargetKey("m2"), time.Now()) })
	})

	It("reports a sync that fails, and syncs again once it can", func(ctx SpecContext) {
		bed.VolSync().FailSyncs("connection reset by peer")
		DeferCleanup(bed.VolSync().FailSyncs, "")
		framework.Update(ctx, hub, vr, func() { vr.Spec.ManualTrigger = "final-2" })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
			g.Expect(vr.Status.Source.Result).To(Equal(string(volsyncv1alpha1.MoverResultFailed)))
			g.Expect(vr.Status.Source.Message).To(ContainSubstring("connection reset by peer"))
		}).WithContext(ctx).Should(Succeed())
		bed.VolSync().FailSyncs("")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
			g.Expect(vr.Status.Source.LastManualSync).To(Equal("final-2"))
			g.Expect(vr.Status.Source.Result).To(Equal(string(volsyncv1alpha1.MoverResultSuccessful)))
		}).WithContext(ctx).Should(Succeed())
	})

	It("restores a claim of another namespace from the replica held here, through an import that goes once the claim is bound", func(ctx SpecContext) {
		m2Key := workloadv1alpha1.ToSyncTargetKey("m2")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vr), vr)).To(Succeed())
		latest := vr.Status.Destination.LatestImage
		origin := client.ObjectKey{Namespace: targetOf("m2").Namespace(ns), Name: latest}
		replica, ok := storage.Snapshot("m2", origin.Namespace, latest)
		Expect(ok).To(BeTrue())
		Expect(replica).To(Equal(written))
		// A drill's sandbox: a namespace of its own, placed on the destination's target.
		drill := hubNamespace(ctx, "m2")
		restoredFrom := map[string]string{storagev1alpha1.RestoreAnnotation: m2Key + "/" + ns + "/" + latest}
		imported := func(claim *corev1.PersistentVolumeClaim) (client.ObjectKey, client.ObjectKey) {
			name := targetOf("m2").ImportName(claim.UID)
			return client.ObjectKey{Namespace: targetOf("m2").Namespace(drill), Name: name}, client.ObjectKey{Name: name}
		}
		// importGone waits until the claim's import is gone and the replica is given back to
		// VolSync's rotation, still VolSync's.
		importGone := func(claim *corev1.PersistentVolumeClaim) {
			GinkgoHelper()
			snapKey, contentKey := imported(claim)
			Eventually(framework.Deleted(ctx, m2, snapKey, &snapshotv1.VolumeSnapshot{})).WithContext(ctx).Should(Succeed())
			Eventually(framework.Deleted(ctx, m2, contentKey, &snapshotv1.VolumeSnapshotContent{})).WithContext(ctx).Should(Succeed())
			Eventually(func(g Gomega) {
				snap := &snapshotv1.VolumeSnapshot{}
				g.Expect(m2.Get(ctx, origin, snap)).To(Succeed())
				g.Expect(snap.Labels).NotTo(HaveKey(transform.KeepLabel))
				g.Expect(snap.Annotations).NotTo(HaveKey(transform.HoldersAnnotation))
				g.Expect(metav1.GetControllerOf(snap)).To(HaveField("Kind", "ReplicationDestination"))
			}).WithContext(ctx).Should(Succeed())
			log, ok := storage.Snapshot("m2", origin.Namespace, latest)
			Expect(ok).To(BeTrue(), "the storage snapshot went with the import, which is Retain")
			Expect(log).To(Equal(replica))
		}

		By("importing the replica and holding it from VolSync's rotation while the claim's copy is not bound")
		storage.FailVolumes("array busy")
		DeferCleanup(storage.FailVolumes, "")
		early := claimFor(drill, "early", corev1.ReadWriteOnce, "m2")
		early.Annotations = restoredFrom
		Expect(hub.Create(ctx, early)).To(Succeed())
		snapKey, contentKey := imported(early)
		Eventually(func(g Gomega) {
			down := &corev1.PersistentVolumeClaim{}
			g.Expect(m2.Get(ctx, downKey("m2", early), down)).To(Succeed())
			g.Expect(down.Spec.DataSourceRef).To(HaveField("Name", snapKey.Name))
			g.Expect(down.Status.Phase).To(Equal(corev1.ClaimPending))
			snap := &snapshotv1.VolumeSnapshot{}
			g.Expect(m2.Get(ctx, snapKey, snap)).To(Succeed())
			g.Expect(snap.Status).NotTo(BeNil())
			g.Expect(snap.Status.ReadyToUse).To(HaveValue(BeTrue()), "the storage has no snapshot of the imported handle")
		}).WithContext(ctx).Should(Succeed())
		content := &snapshotv1.VolumeSnapshotContent{}
		Expect(m2.Get(ctx, contentKey, content)).To(Succeed())
		Expect(content.Spec.DeletionPolicy).To(Equal(snapshotv1.VolumeSnapshotContentRetain))
		Expect(content.Spec.VolumeSnapshotRef).To(And(HaveField("Namespace", snapKey.Namespace), HaveField("Name", snapKey.Name)))
		held := &snapshotv1.VolumeSnapshot{}
		Expect(m2.Get(ctx, origin, held)).To(Succeed())
		Expect(held.Labels).To(HaveKey(transform.KeepLabel))
		Expect(content.Spec.Source.SnapshotHandle).NotTo(BeNil())
		log, ok := storage.SnapshotOf(*content.Spec.Source.SnapshotHandle)
		Expect(ok).To(BeTrue())
		Expect(log).To(Equal(replica), "the import names another storage snapshot than the replica's")

		By("letting go of the import when the claim is deleted before its copy was bound")
		Expect(hub.Delete(ctx, early)).To(Succeed())
		Eventually(framework.Deleted(ctx, m2, downKey("m2", early), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())
		importGone(early)
		storage.FailVolumes("")

		By("making the claim's copy from the import, with the replica's data")
		restored := claimFor(drill, "data", corev1.ReadWriteOnce, "m2")
		restored.Annotations = restoredFrom
		Expect(hub.Create(ctx, restored)).To(Succeed())
		down := boundClaim(ctx, m2, downKey("m2", restored))
		snapKey, _ = imported(restored)
		Expect(down.Spec.DataSourceRef).To(HaveField("Name", snapKey.Name))
		pv := &corev1.PersistentVolume{}
		Expect(m2.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, pv)).To(Succeed())
		Expect(storage.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(replica), "the restored volume is not the replica")

		By("deleting the import once the copy is bound, and giving the replica back")
		importGone(restored)

		By("rotating the replica away at the next sync of the replication that keeps it")
		write(1)
		framework.Update(ctx, hub, vr, func() { vr.Spec.ManualTrigger = "final-3" })
		Expect(image(ctx, latest)).To(Equal(written))
		Eventually(framework.Deleted(ctx, m2, origin, &snapshotv1.VolumeSnapshot{})).WithContext(ctx).Should(Succeed())
		Expect(storage.Records(pv.Spec.CSI.VolumeHandle)).To(Equal(replica), "the restored volume changed with the replication")

		Expect(hub.Delete(ctx, restored)).To(Succeed())
		Eventually(framework.Deleted(ctx, m2, downKey("m2", restored), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())
	})

	It("removes both sides, and the destination's namespace, when the replication goes", func(ctx SpecContext) {
		Expect(hub.Delete(ctx, vr)).To(Succeed())
		Eventually(framework.Deleted(ctx, hub, client.ObjectKeyFromObject(vr), &storagev1alpha1.VolumeReplication{})).WithContext(ctx).Should(Succeed())
		Expect(apierrors.IsNotFound(m1.Get(ctx, client.ObjectKey{Namespace: targetOf("m1").Namespace(ns), Name: "custody-data"}, &volsyncv1alpha1.ReplicationSource{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(m1.Get(ctx, client.ObjectKey{Namespace: targetOf("m1").Namespace(ns), Name: "custody-replication-data"}, &corev1.Secret{}))).To(BeTrue())
		Expect(apierrors.IsNotFound(m2.Get(ctx, client.ObjectKey{Namespace: targetOf("m2").Namespace(ns), Name: "custody-data"}, &volsyncv1alpha1.ReplicationDestination{}))).To(BeTrue())
		Eventually(func(g Gomega) {
			n := &corev1.Namespace{}
			err := m2.Get(ctx, client.ObjectKey{Name: targetOf("m2").Namespace(ns)}, n)
			g.Expect(apierrors.IsNotFound(err) || n.DeletionTimestamp != nil).To(BeTrue(), "the destination's namespace stays in m2")
		}).WithContext(ctx).Should(Succeed())
		Expect(storage.CheckWrites()).To(Succeed())
	})
})
