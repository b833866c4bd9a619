package security

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/custody-dev/custody/test/testbed"
)

var _ = Describe("The controller's metrics", func() {
	It("are served to the metrics reader only: a member's syncer token is refused, and a request without one", func(ctx SpecContext) {
		url := env.MetricsURL()
		reader, err := env.MetricsToken(ctx)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func(g Gomega) {
			code, body, err := testbed.Scrape(ctx, url, reader)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(http.StatusOK), body)
		}).WithContext(ctx).Should(Succeed())

		for who, token := range map[string]string{"m1's syncer": env.SyncerCredential("m1").Token().Raw, "no one": ""} {
			By("scraping as " + who)
			want := http.StatusForbidden
			if token == "" {
				want = http.StatusUnauthorized
			}
			code, body, err := testbed.Scrape(ctx, url, token)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(Equal(want), body)
			Expect(body).NotTo(ContainSubstring("controller_runtime"))
		}
	})
})
