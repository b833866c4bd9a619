package volumes

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/coordination"
)

// The brake on mass failure: when more than 55% of at least 10 targets are lost at once
// (fencing.DefaultBrake, which the bed's controller runs with), no Fence is asked for. The
// bed's three members are made eleven targets by heartbeating stand-ins, which are all the
// hub sees of a member.
var _ = Describe("A lost owner among most of the hub's targets lost at once", func() {
	It("is not fenced while they are lost, and is fenced and its volume moved once they are back", func(ctx SpecContext) {
		ns, lost, h := ownedVolume(ctx)
		ins := standIns(ctx, 8)
		silenced := ins.names[:6]

		By("losing the owner and six stand-ins: 7 of 11 targets")
		ins.silence(silenced, true)
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
		ins.silence(silenced, false)
		failedOver(ctx, ns, lost)
		AddReportEntry("stand-ins back to the volume bound on the survivor", ReportEntryVisibilityAlways,
			fmt.Sprintf("%s (the brake rechecks every %s)", time.Since(back).Round(100*time.Millisecond), coordination.BrakeRecheck))
		comesBack(ctx, lost, ns)
	})
})

// standInTargets are SyncTargets of no Location whose heartbeat Leases the spec renews, as
// their syncers would, until it silences them.
type standInTargets struct {
	names []string
	mu    sync.Mutex
	quiet map[string]bool
}

// standIns makes n stand-in targets, renews their Leases every heartbeat period until the
// spec ends, and waits until they are Ready.
func standIns(ctx context.Context, n int) *standInTargets {
	GinkgoHelper()
	s := &standInTargets{quiet: map[string]bool{}}
	suffix := rand.String(5)
	period := env.HeartbeatPeriod()
	for i := range n {
		t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("stand-in-%s-%d", suffix, i)}}
		Expect(hub.Create(ctx, t)).To(Succeed())
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: t.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(t.Name), LeaseDurationSeconds: ptr.To(int32(max(1, period/time.Second))),
				RenewTime: &metav1.MicroTime{Time: time.Now()}}}
		Expect(hub.Create(ctx, lease)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(client.IgnoreNotFound(hub.Delete(ctx, lease))).To(Succeed())
			Expect(client.IgnoreNotFound(hub.Delete(ctx, t))).To(Succeed())
		})
		s.names = append(s.names, t.Name)
	}
	renewing, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for {
			select {
			case <-renewing.Done():
				return
			case <-time.After(period):
			}
			s.renew(renewing)
		}
	}()
	DeferCleanup(func() { stop(); <-done })
	Eventually(func(g Gomega) {
		for _, name := range s.names {
			t := &workloadv1alpha1.SyncTarget{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: name}, t)).To(Succeed())
			g.Expect(t.IsReady()).To(BeTrue(), "%s is not Ready", name)
		}
	}).WithContext(ctx).Should(Succeed())
	return s
}

// renew renews the Leases of the stand-ins that are not silenced.
func (s *standInTargets) renew(ctx context.Context) {
	for _, name := range s.names {
		s.mu.Lock()
		quiet := s.quiet[name]
		s.mu.Unlock()
		if quiet {
			continue
		}
		lease := &coordinationv1.Lease{}
		if err := hub.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name}, lease); err != nil {
			continue // the hub may be busy; the next period renews it
		}
		lease.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		_ = hub.Update(ctx, lease)
	}
}

// silence stops, or resumes, renewing the named stand-ins' Leases.
func (s *standInTargets) silence(names []string, quiet bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		s.quiet[name] = quiet
	}
}
