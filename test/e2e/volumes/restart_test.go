package volumes

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A controller restart", func() {
	// Each move stops the controller at one of its steps, checks that nothing moves while it
	// is away, and starts it again: the move must finish from what the API holds.
	It("resumes a move from any step", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		claim(ctx, ns, "data", corev1.ReadWriteOnce)
		h := handle(ctx, bound(ctx, ns, "data").Status.VolumeName)

		steps := []struct {
			name string
			// reached tells, with the VolumeOwnership, the hub claim and the hub PV, that the
			// move has come to the step at which the controller stops.
			reached func(st storagev1alpha1.VolumeOwnershipStatus, c *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, to string) bool
		}{
			{"before the namespace moves", nil},
			{"while the old owner is asked to let go", func(st storagev1alpha1.VolumeOwnershipStatus, _ *corev1.PersistentVolumeClaim, _ *corev1.PersistentVolume, _ string) bool {
				return st.Phase == storagev1alpha1.Moving
			}},
			{"as soon as the new owner has the PV", func(_ storagev1alpha1.VolumeOwnershipStatus, _ *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume, to string) bool {
				return pv.Labels[workloadv1alpha1.StateLabel(to)] == "Sync"
			}},
		}
		for _, step := range steps {
			By("moving with the controller stopped " + step.name)
			vo := bound(ctx, ns, "data")
			from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)
			if step.reached == nil {
				Expect(env.StopController()).To(Succeed())
				framework.Cordon(ctx, hub, from, true)
			} else {
				framework.Cordon(ctx, hub, from, true)
				Eventually(func(g Gomega) {
					c := &corev1.PersistentVolumeClaim{}
					g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, c)).To(Succeed())
					g.Expect(step.reached(ownership(ctx, ns, "data").Status, c, hubPV(ctx, vo.Status.VolumeName), to)).To(BeTrue())
				}).WithContext(ctx).WithPolling(20 * time.Millisecond).Should(Succeed())
				Expect(env.StopController()).To(Succeed())
			}
			Consistently(func(g Gomega) {
				g.Expect(storage.CheckSingleOwner()).To(Succeed())
				g.Expect(volume(h).Releases).To(BeZero())
			}).WithContext(ctx).Should(Succeed())
			Expect(env.StartController()).To(Succeed())
			waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
				g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
				g.Expect(st.Owner).To(Equal(to))
			})
			holders(ctx, h, to)
			framework.Cordon(ctx, hub, from, false)
		}
		DeferCleanup(func(ctx context.Context) {
			for _, m := range []string{"m1", "m2"} {
				framework.Cordon(ctx, hub, m, false)
			}
		})
	})
})
