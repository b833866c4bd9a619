package security

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

var (
	env     *environment.Environment
	hub     client.Client
	storage *simstorage.Storage
	hubID   string
)

func TestSecurity(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(90 * time.Second)
	SetDefaultEventuallyPollingInterval(200 * time.Millisecond)
	SetDefaultConsistentlyDuration(5 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Security suite")
}

// The environment: Location "loc" of m1 and m2 over one storage domain, config/default's
// roles and admission policies on the hub, each syncer with its own target's identity.
var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	o := environment.OneLocation()
	o.MetricsAddr, err = testbed.FreeAddr()
	Expect(err).NotTo(HaveOccurred())
	env = framework.Start(ctx, o)
	hub, storage, hubID = env.Hub.Client, env.Storage(domain), framework.HubID(ctx, env.Hub.Client)
	// The hub's API server takes up admission policies a moment after they are made: the
	// specs start once a namespace user is refused a state label, as an admin who installed
	// Custody would check.
	ns, user := tenant(ctx, false)
	Eventually(func() error {
		probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-",
			Labels: map[string]string{workloadv1alpha1.StateLabel("m1"): string(workloadv1alpha1.ResourceStateSync)}}}
		return user.Create(ctx, probe, client.DryRunAll)
	}).WithContext(ctx).Should(MatchError(ContainSubstring(ruleKeys)))
}, NodeTimeout(testbed.StartTimeout))

// Every spec ends with the ledger's invariants.
var _ = AfterEach(func() { framework.ExpectLedger(storage) })
