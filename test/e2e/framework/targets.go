package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
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
