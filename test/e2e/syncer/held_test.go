package syncer

import (
	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

var _ = Describe("A syncer executing Fences", func() {
	It("lets go, when it starts, of a Fence it held before it made the NetworkFence and no longer executes", func(ctx SpecContext) {
		hub := bed.Hub.Client
		s := syncers["m1"]
		Eventually(ready(ctx, "m1")).WithContext(ctx).Should(withReason(metav1.ConditionTrue, workloadv1alpha1.ReasonHeartbeating))
		s.stop()
		DeferCleanup(func() {
			if s.cancel == nil {
				s.start()
			}
		})

		By("leaving a Fence of m2 held by m1's finalizer, labelled for no executor, as a syncer stopped between the two steps leaves it")
		f := &storagev1alpha1.Fence{
			ObjectMeta: metav1.ObjectMeta{
				Name:       storagev1alpha1.FenceName("m2", "shared"),
				Finalizers: []string{workloadv1alpha1.SyncerFinalizer("m1")},
			},
			Spec: storagev1alpha1.FenceSpec{TargetName: "m2", Domain: "shared", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Network},
		}
		Expect(hub.Create(ctx, f)).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(client.IgnoreNotFound(hub.Patch(ctx, f, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
			Expect(client.IgnoreNotFound(hub.Delete(ctx, f))).To(Succeed())
			Eventually(gone(ctx, hub, client.ObjectKeyFromObject(f), &storagev1alpha1.Fence{})).WithContext(ctx).Should(Succeed())
		})

		s.start()
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(f), f)).To(Succeed())
			g.Expect(f.Finalizers).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed(), "m1's finalizer still holds the Fence")
		nfs := &csiaddonsv1alpha1.NetworkFenceList{}
		Expect(bed.Member("m1").Client.List(ctx, nfs)).To(Succeed())
		Expect(nfs.Items).To(BeEmpty(), "m1 made a NetworkFence for a Fence it does not execute")
	})
})
