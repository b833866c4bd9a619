package syncer

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/heartbeat"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// slowReader lists from its Reader, once opened: as a member's claims and PVs take a report
// that long to go through.
type slowReader struct {
	client.Reader
	mu   sync.Mutex
	gate chan struct{}
}

func (s *slowReader) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = make(chan struct{})
}

func (s *slowReader) open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.gate)
	s.gate = nil
}

func (s *slowReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Reader.List(ctx, list, opts...)
}

var _ = Describe("The heartbeat", func() {
	It("renews the Lease once a period while a clean report takes longer, and carries each report once made", func(ctx SpecContext) {
		const name = "h4"
		createSyncTarget(ctx, name)
		member := bed.Member("m1").Client
		scan := &slowReader{Reader: member}
		reports := &heartbeat.Reports{}
		reporter := &heartbeat.Reconciler{
			Hub: bed.Hub.Client, MemberReader: member, Member: scan, SyncTargetName: name, Period: heartbeatPeriod,
			Target: transform.Target{Key: name, Hub: "renewal-test"}, Reports: reports,
		}
		renewer := &heartbeat.Renewer{
			Hub: bed.Hub.Client, HubReader: bed.Hub.Client, MemberReader: member, SyncTargetName: name,
			Period: heartbeatPeriod, MinRetry: 100 * time.Millisecond, Reports: reports,
		}
		runCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() { _ = renewer.Start(runCtx) }()
		DeferCleanup(func(ctx SpecContext) {
			stop()
			Expect(client.IgnoreNotFound(bed.Hub.Client.Delete(ctx, &coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name}}))).To(Succeed())
		})

		By("renewing before the first report, with none in the Lease")
		Eventually(func(g Gomega) {
			_, reported := workloadv1alpha1.CleanReportOf(leaseOf(ctx, g, name))
			g.Expect(reported).To(BeFalse())
		}).WithContext(ctx).Should(Succeed())

		By("carrying the first report")
		_, err := reporter.Reconcile(ctx, ctrl.Request{})
		Expect(err).NotTo(HaveOccurred())
		first := reports.Last()
		Expect(first).NotTo(BeNil())
		Expect(first.Clean).To(HaveKeyWithValue("shared", metav1.ConditionTrue))
		Eventually(func(g Gomega) {
			report, _ := workloadv1alpha1.CleanReportOf(leaseOf(ctx, g, name))
			g.Expect(report.Time.Equal(&first.Time)).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())

		By("renewing on time while the next report is held up, with the report it has")
		scan.hold()
		reported := make(chan error, 1)
		go func() {
			_, err := reporter.Reconcile(ctx, ctrl.Request{})
			reported <- err
		}()
		held := leaseOf(ctx, Default, name).Spec.RenewTime.Time
		Consistently(func(g Gomega) {
			report, _ := workloadv1alpha1.CleanReportOf(leaseOf(ctx, g, name))
			g.Expect(report.Time.Equal(&first.Time)).To(BeTrue(), "a report was made while it was held up")
		}).WithContext(ctx).WithTimeout(4 * heartbeatPeriod).Should(Succeed())
		Expect(leaseOf(ctx, Default, name).Spec.RenewTime.Time).To(BeTemporally(">=", held.Add(2*heartbeatPeriod)))

		By("carrying the next report once it is made")
		scan.open()
		Eventually(reported).WithContext(ctx).Should(Receive(BeNil()))
		Eventually(func(g Gomega) {
			report, _ := workloadv1alpha1.CleanReportOf(leaseOf(ctx, g, name))
			g.Expect(report.Time.After(first.Time.Time)).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
	})
})
