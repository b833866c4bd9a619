package manifests

import (
	"context"
	"net/http"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/custody-dev/custody/test/testbed"
)

// The identities that scrape: one bound to config/'s custody-metrics-reader, as Prometheus'
// would be, and one that is not.
const (
	metricsReader   = "custody-metrics-probe-reader"
	metricsStranger = "custody-metrics-probe-stranger"
)

// One ordered container: both overlays are applied, then the controller and a syncer run as
// deployed, each with the metrics endpoint of its Deployment's flags on a free local port.
var _ = Describe("The metrics", Ordered, func() {
	var hubObjs, memberObjs rendered
	BeforeAll(func(ctx SpecContext) {
		hubObjs = render(filepath.Join(root, "config", "default"))
		memberObjs = render(filepath.Join(root, "config", "member"))
		apply(ctx, bed.Hub.Client, hubObjs)
		apply(ctx, bed.Member(member).Client, memberObjs)
	})

	It("of the controller are served over HTTPS to the identities the hub lets read them, and to no one else", func(ctx SpecContext) {
		d := &appsv1.Deployment{}
		hubObjs.decode("Deployment", namespace, "custody-controller", d)
		c := start(ctx, "controller", append(onlyContainer(d, "controller").Args,
			"--kubeconfig="+kubeconfigAs(bed.Hub, controllerSA)))
		expectReadByReaderOnly(ctx, bed.Hub, c)
	})

	It("of a syncer are served over HTTPS to the identities its member lets read them, and to no one else", func(ctx SpecContext) {
		// The member answers for the scrape: the syncer's hub identity plays no part in it.
		s := start(ctx, "syncer", append(syncerArgs(memberObjs),
			"--hub-kubeconfig="+bed.Hub.Kubeconfig,
			"--member-kubeconfig="+kubeconfigAs(bed.Member(member), syncerMemberSA)))
		expectReadByReaderOnly(ctx, bed.Member(member), s)
	})
})

// expectReadByReaderOnly checks that p serves its metrics over HTTPS to a token of an identity
// bound to custody-metrics-reader in cluster c, and refuses a request without a token (401)
// and one with a token of an identity that is not bound (403).
func expectReadByReaderOnly(ctx context.Context, c *testbed.Cluster, p *process) {
	GinkgoHelper()
	Expect(c.BindMetricsReader(ctx, namespace, metricsReader)).To(Succeed())
	reader, err := c.ServiceAccountToken(ctx, namespace, metricsReader)
	Expect(err).NotTo(HaveOccurred())
	stranger, err := c.ServiceAccountToken(ctx, namespace, metricsStranger)
	Expect(err).NotTo(HaveOccurred())
	url := "https://" + p.metrics + "/metrics"

	Eventually(func(g Gomega) {
		g.Expect(p.running()).To(Succeed())
		code, body, err := testbed.Scrape(ctx, url, reader)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(http.StatusOK), body)
		g.Expect(body).To(ContainSubstring(`controller_runtime_reconcile_total{controller="`))
	}).WithContext(ctx).Should(Succeed(), "%s serves its metrics to %s", p.name, metricsReader)

	for token, want := range map[string]int{"": http.StatusUnauthorized, stranger: http.StatusForbidden} {
		code, body, err := testbed.Scrape(ctx, url, token)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(want), "%s: %s", p.name, body)
		Expect(body).NotTo(ContainSubstring("controller_runtime"))
	}
	code, _, err := testbed.Scrape(ctx, "http://"+p.metrics+"/metrics", reader)
	Expect(err == nil && code == http.StatusOK).To(BeFalse(), "%s serves its metrics over plain HTTP", p.name)
}
