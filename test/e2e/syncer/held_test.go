package syncer

import (
	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// A syncer stopped between two steps may leave its finalizer on a hub object that is no
// longer labelled for its target when it starts again: none of its caches holds the object.
var _ = Describe("A syncer starting", func() {
	DescribeTable("lets go of what its finalizer holds and is no longer its target's",
		func(ctx SpecContext, obj func(ns string) client.Object, left func(ctx SpecContext, ns string), check func(SpecContext, string)) {
			hub := bed.Hub.Client
			s := syncers["m1"]
			Eventually(ready(ctx, "m1")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
			s.stop()
			DeferCleanup(func() {
				if s.cancel == nil {
					s.start()
				}
			})

			By("leaving the object held by m1's finalizer, labelled for no target")
			ns := hubNamespace(ctx)
			o := obj(ns)
			o.SetFinalizers([]string{workloadv1alpha1.SyncerFinalizer("m1")})
			Expect(hub.Create(ctx, o)).To(Succeed())
			DeferCleanup(func(ctx SpecContext) {
				Expect(client.IgnoreNotFound(hub.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
				Expect(client.IgnoreNotFound(hub.Delete(ctx, o))).To(Succeed())
				Eventually(framework.Deleted(ctx, hub, client.ObjectKeyFromObject(o), o.DeepCopyObject().(client.Object))).WithContext(ctx).Should(Succeed())
			})

			if left != nil {
				By("leaving in m1 what the syncer had not deleted yet")
				left(ctx, ns)
			}

			s.start()
			Eventually(func(g Gomega) {
				g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
				g.Expect(o.GetFinalizers()).To(BeEmpty())
			}).WithContext(ctx).Should(Succeed(), "m1's finalizer still holds the object")
			if check != nil {
				check(ctx, ns)
			}
		},
		Entry("a Fence it held before it made the NetworkFence and no longer executes", func(string) client.Object {
			return &storagev1alpha1.Fence{
				ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName("m2", "shared")},
				Spec:       storagev1alpha1.FenceSpec{TargetName: "m2", Domain: "shared", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network},
			}
		}, nil, func(ctx SpecContext, _ string) {
			nfs := &csiaddonsv1alpha1.NetworkFenceList{}
			Expect(bed.Member("m1").Client.List(ctx, nfs)).To(Succeed())
			Expect(nfs.Items).To(BeEmpty(), "m1 made a NetworkFence for a Fence it does not execute")
		}),
		Entry("a VolumeReplication whose side it deleted once the replication left it", replicationLeft, nil, nil),
		// Only the copy of the key is left: no ReplicationSource or ReplicationDestination is
		// there to be deleted, whose deletion would bring the syncer back to let go.
		Entry("a VolumeReplication whose ReplicationSource it deleted, and not yet its copy of the key, once the replication left it",
			replicationLeft, func(ctx SpecContext, ns string) {
				member, key := bed.Member("m1").Client, keyCopy(ns)
				downstream := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}
				Expect(member.Create(ctx, downstream)).To(Succeed())
				DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(member.Delete(ctx, downstream))).To(Succeed()) })
				Expect(member.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
					Labels:      targetOf("m1").Markers(),
					Annotations: map[string]string{transform.HubNamespaceAnnotation: ns, transform.HubNameAnnotation: "data"}},
					Data: map[string][]byte{"psk.txt": []byte("volsyncrsynctls:00")}})).To(Succeed())
			}, func(ctx SpecContext, ns string) {
				Eventually(framework.Deleted(ctx, bed.Member("m1").Client, keyCopy(ns), &corev1.Secret{})).WithContext(ctx).Should(Succeed())
			}),
	)
})

// replicationLeft is a VolumeReplication of the hub namespace ns that went from m1 to m2 and
// m3.
func replicationLeft(ns string) client.Object {
	return &storagev1alpha1.VolumeReplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data"},
		Spec: storagev1alpha1.VolumeReplicationSpec{Pair: "e2e", Source: workloadv1alpha1.ToSyncTargetKey("m2"),
			Destination: workloadv1alpha1.ToSyncTargetKey("m3"), Schedule: "*/5 * * * *", KeySecret: "custody-pair-e2e"},
	}
}

// keyCopy names m1's copy of the pair's key for replicationLeft, as its syncer makes it.
func keyCopy(ns string) client.ObjectKey {
	return client.ObjectKey{Namespace: targetOf("m1").Namespace(ns), Name: "custody-replication-data"}
}
