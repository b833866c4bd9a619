package validation

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// The messages of the rules under test.
const (
	reservedTarget = "SyncTarget names starting custody- are reserved for Custody's own objects"
	targetKey      = "a SyncTarget's name is a DNS label of at most 56 characters"
	fenceDelayMin  = "fenceDelay must be at least 1s"
	everyAddress   = "a node CIDR may not be /0"
	notACIDR       = "every entry must be a CIDR such as 10.0.0.0/24"
	locationName   = "a Location's name is a DNS label of at most 63 characters"
	pairName       = "a LocationPair's name is at most 63 characters"
	failoverMin    = "failoverThreshold must be at least 3s"
	primaryTooLong = "spec.primary: Too long"
	targetTooLong  = "spec.targetName: Too long"
	primaryClass   = "a class of the primary is mapped once at most"
	secondaryClass = "a class of the secondary is mapped once at most"
)

func target(name string, opts ...func(*workloadv1alpha1.SyncTargetSpec)) *workloadv1alpha1.SyncTarget {
	t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"shared"}}}
	for _, o := range opts {
		o(&t.Spec)
	}
	return t
}

func fenceDelay(d time.Duration) func(*workloadv1alpha1.SyncTargetSpec) {
	return func(s *workloadv1alpha1.SyncTargetSpec) { s.FenceDelay = &metav1.Duration{Duration: d} }
}

func nodeCIDRs(cidrs ...string) func(*workloadv1alpha1.SyncTargetSpec) {
	return func(s *workloadv1alpha1.SyncTargetSpec) {
		s.Fencing = &workloadv1alpha1.FencingSpec{NodeCIDRs: cidrs, NetworkFenceClassName: "fence"}
	}
}

func location(name string) *schedulingv1alpha1.Location {
	return &schedulingv1alpha1.Location{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func pair(name, primary string, threshold time.Duration) *schedulingv1alpha1.LocationPair {
	return &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: schedulingv1alpha1.LocationPairSpec{
		Primary: primary, Secondary: "west", FailoverThreshold: &metav1.Duration{Duration: threshold}}}
}

func classMap(name string, m ...schedulingv1alpha1.StorageClassMapping) *schedulingv1alpha1.LocationPair {
	p := pair(name, "east", time.Minute)
	p.Spec.StorageClassMap = m
	return p
}

func fence(target string) *storagev1alpha1.Fence {
	return &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(target, "shared")},
		Spec: storagev1alpha1.FenceSpec{TargetName: target, Domain: "shared", Mode: storagev1alpha1.Manual}}
}

var _ = Describe("Custody's CRDs", func() {
	DescribeTable("refuse at admission, with a message that says why",
		func(ctx context.Context, obj client.Object, message string) {
			err := hub.Create(ctx, obj)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "created, or refused otherwise: %v", err)
			Expect(err).To(MatchError(ContainSubstring(message)))
		},
		Entry("a SyncTarget named like the controller's leader-election Lease", target("custody-controller"), reservedTarget),
		Entry("any SyncTarget named custody-*", target("custody-m1"), reservedTarget),
		Entry("a SyncTarget name longer than a target key", target(strings.Repeat("m", 57)), targetKey),
		Entry("a SyncTarget name that is no DNS label", target("m1.east"), targetKey),
		Entry("a fence delay of 0s", target("zero-delay", fenceDelay(0)), fenceDelayMin),
		Entry("a fence delay under a second", target("short-delay", fenceDelay(999*time.Millisecond)), fenceDelayMin),
		Entry("an IPv4 node CIDR of /0", target("all-v4", nodeCIDRs("10.0.0.0/24", "0.0.0.0/0")), everyAddress),
		Entry("an IPv6 node CIDR of /0", target("all-v6", nodeCIDRs("::/0")), everyAddress),
		Entry("a node address that is no CIDR", target("no-cidr", nodeCIDRs("10.0.0.1")), notACIDR),
		Entry("a Location name that is no DNS label", location("east.1"), locationName),
		Entry("a Location name longer than a label value", location(strings.Repeat("l", 64)), locationName),
		Entry("a LocationPair name longer than a label value", pair(strings.Repeat("p", 64), "east", time.Minute), pairName),
		Entry("a failover threshold of 0s", pair("zero-threshold", "east", 0), failoverMin),
		Entry("a failover threshold under the shortest grace", pair("short-threshold", "east", 2999*time.Millisecond), failoverMin),
		Entry("a pair's Location longer than a Location name", pair("long-primary", strings.Repeat("l", 64), time.Minute), primaryTooLong),
		Entry("a Fence of a target name longer than a target key", fence(strings.Repeat("m", 57)), targetTooLong),
		Entry("a class of the primary mapped twice", classMap("twice-primary", schedulingv1alpha1.StorageClassMapping{Primary: "a", Secondary: "b"},
			schedulingv1alpha1.StorageClassMapping{Primary: "a", Secondary: "c"}), primaryClass),
		Entry("a class of the secondary mapped twice", classMap("twice-secondary", schedulingv1alpha1.StorageClassMapping{Primary: "a", Secondary: "c"},
			schedulingv1alpha1.StorageClassMapping{Primary: "b", Secondary: "c"}), secondaryClass),
	)

	DescribeTable("accept what is within the bounds",
		func(ctx context.Context, obj client.Object) {
			Expect(hub.Create(ctx, obj)).To(Succeed())
			DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, obj)).To(Succeed()) })
		},
		Entry("a SyncTarget with the shortest fence delay and node CIDRs of both families", target("m1", fenceDelay(time.Second), nodeCIDRs("10.0.0.0/24", "fd00::/64"))),
		Entry("a SyncTarget named as long as a target key", target(strings.Repeat("m", 56))),
		Entry("a SyncTarget whose name merely holds custody", target("m1-custody")),
		Entry("a Location named as long as a label value", location(strings.Repeat("l", 63))),
		Entry("a LocationPair named as long as a label value, with the shortest failover threshold", pair(strings.Repeat("p", 63), "east", 3*time.Second)),
		Entry("a Fence of a target named as long as a target key", fence(strings.Repeat("m", 56))),
		Entry("a class map that swaps two names", classMap("swapped", schedulingv1alpha1.StorageClassMapping{Primary: "a", Secondary: "b"},
			schedulingv1alpha1.StorageClassMapping{Primary: "b", Secondary: "a"})),
	)
})
