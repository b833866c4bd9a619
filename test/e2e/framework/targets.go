package framework

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// SetReady renews the SyncTarget's heartbeat, or lets it lapse, as its syncer would, for
// suites that run no syncer: the health controller turns the target Ready or Unreachable.
func SetReady(ctx context.Context, hub client.Client, target string, ready bool) {
	GinkgoHelper()
	Expect(environment.Heartbeat(ctx, hub, target, ready)).To(Succeed())
}

// Cordon makes the SyncTarget unschedulable, or schedulable again.
func Cordon(ctx context.Context, hub client.Client, target string, cordoned bool) {
	GinkgoHelper()
	Expect(environment.Cordon(ctx, hub, target, cordoned)).To(Succeed())
}

// PatchTarget changes the SyncTarget's spec with change, in one merge patch.
func PatchTarget(ctx context.Context, hub client.Client, target string, change func(*workloadv1alpha1.SyncTargetSpec)) {
	GinkgoHelper()
	Expect(environment.PatchTarget(ctx, hub, target, change)).To(Succeed())
}

// Member is the bed's member cluster called name; in the environments of the suites, a
// target's name is its member's.
func Member(bed *testbed.Bed, name string) *testbed.Cluster {
	GinkgoHelper()
	m := bed.Member(name)
	Expect(m).NotTo(BeNil(), "no member %s", name)
	return m
}

// StandIns makes n stand-in targets of no Location, which renew their Leases every heartbeat
// period until the spec ends, and waits until they are Ready: they are all the hub sees of a
// member, and make up the count of a hub's targets.
func StandIns(ctx context.Context, hub client.Client, n int, period time.Duration) *environment.StandIns {
	GinkgoHelper()
	suffix := rand.String(5)
	targets := make([]*workloadv1alpha1.SyncTarget, 0, n)
	for i := range n {
		targets = append(targets, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("stand-in-%s-%d", suffix, i)}})
	}
	ins, err := environment.StartStandIns(ctx, hub, targets, environment.StandInReport{}, period)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func(ctx context.Context) { Expect(ins.Delete(ctx)).To(Succeed()) })
	Expect(ins.WaitReady(ctx)).To(Succeed())
	return ins
}
