package volumes

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

// outageLength is how long a cluster's API server stays down in the specs below.
const outageLength = 20 * time.Second

// An owned move with an outage right after the cordon must finish once the outage is over.
// How long it took is reported beside the goal, two heartbeat periods plus what an
// undisturbed move takes, measured in the same run: a figure, not a pass mark, as a member's
// own controller manager may take seconds more to come back on a loaded machine.
var _ = Describe("An outage during an owned move", Ordered, func() {
	var undisturbed time.Duration

	// timedMove binds a new claim, cordons its owner, runs outage, and returns how long the
	// move took after outage returned.
	timedMove := func(ctx context.Context, outage func(from string)) time.Duration {
		GinkgoHelper()
		ns := framework.App(ctx, hub, "loc")
		claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)
		h := handle(ctx, vo.Status.VolumeName)
		framework.Cordon(ctx, hub, from, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		// The outage outlasts the default fence delay: the owner's own delay keeps the move
		// waiting for its acknowledgement, which is what is timed here.
		setFenceDelay(ctx, from, &metav1.Duration{Duration: 10 * time.Minute})
		DeferCleanup(setFenceDelay, context.Background(), from, (*metav1.Duration)(nil))
		outage(from)
		start := time.Now()
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Owner).To(Equal(to))
		})
		took := time.Since(start)
		// The old owner acknowledged only once its PV was gone from its API server, which the
		// attacher's finalizer allows only after the storage detached: the ledger never lags,
		// even after an outage.
		Expect(volume(h).Holders).NotTo(ContainElement(from))
		holders(ctx, h, to)
		Expect(volume(h).Releases).To(BeZero())
		return took
	}
	// recovers reports the recovery time beside the goal.
	recovers := func(what string, took time.Duration) {
		goal := 2*env.HeartbeatPeriod() + undisturbed
		verdict := "met"
		if took > goal {
			verdict = "missed"
		}
		AddReportEntry(what, ReportEntryVisibilityAlways, fmt.Sprintf("%s after it answered again; goal %s (2 heartbeats + an undisturbed move of %s) %s",
			took.Round(time.Millisecond), goal.Round(time.Millisecond), undisturbed.Round(time.Millisecond), verdict))
	}

	It("moves undisturbed, which sets the floor", func(ctx SpecContext) {
		undisturbed = timedMove(ctx, func(string) {})
		AddReportEntry("undisturbed move", ReportEntryVisibilityAlways, undisturbed.Round(time.Millisecond).String())
	})

	It("finishes soon after the owner's API server is back", func(ctx SpecContext) {
		recovers("member API server outage", timedMove(ctx, func(from string) {
			Expect(framework.Member(env.Bed, from).StopAPIServer()).To(Succeed())
			time.Sleep(outageLength)
			Expect(framework.Member(env.Bed, from).StartAPIServer(ctx)).To(Succeed())
		}))
	})

	It("finishes soon after the owner's syncer restarts", func(ctx SpecContext) {
		recovers("syncer restart", timedMove(ctx, func(from string) {
			Expect(env.StopSyncer(from)).To(Succeed())
			Expect(env.StartSyncer(from)).To(Succeed())
		}))
	})

	It("finishes soon after the hub's API server is back", func(ctx SpecContext) {
		recovers("hub API server outage", timedMove(ctx, func(string) {
			Expect(env.Hub.StopAPIServer()).To(Succeed())
			time.Sleep(outageLength)
			Expect(env.Hub.StartAPIServer(ctx)).To(Succeed())
		}))
	})
})
