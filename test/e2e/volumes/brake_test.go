package volumes

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// The brake on mass failure: when more than 55% of at least 10 targets are lost at once
// (fencing.DefaultBrake, which the bed's controller runs with), no Fence is asked for. The
// bed's three members are made eleven targets by heartbeating stand-ins, which are all the
// hub sees of a member.
var _ = Describe("A lost owner among most of the hub's targets lost at once", func() {
	It("is not fenced while they are lost, and is fenced and its volume moved once they are back", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		ins := framework.StandIns(ctx, hub, 8, env.HeartbeatPeriod())
		silenced := ins.Names[:6]

		By("losing the owner and six stand-ins: 7 of 11 targets")
		ins.Silence(silenced, true)
		loseMember(ctx, lost, true)
		vo := waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonMassFailure), st.Message)
		})
		GinkgoWriter.Println(vo.Status.Message)
		fence := client.ObjectKey{Name: storagev1alpha1.FenceName(lost, domain)}
		Consistently(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(hub.Get(ctx, fence, &storagev1alpha1.Fence{}))).To(BeTrue(), "a Fence was asked for under the brake")
			g.Expect(ownership(ctx, ns, "data").Status.Owner).To(Equal(lost))
		}).WithContext(ctx).Should(Succeed())
		holders(ctx, h, lost)

		By("bringing the stand-ins back: one lost target of 11, and the owner is fenced")
		back := time.Now()
		ins.Silence(silenced, false)
		failedOver(ctx, ns, lost)
		AddReportEntry("stand-ins back to the volume bound on the survivor", ReportEntryVisibilityAlways,
			fmt.Sprintf("%s (the brake rechecks every %s)", time.Since(back).Round(100*time.Millisecond), coordination.BrakeRecheck))
		comesBack(ctx, lost, ns)
	})
})
