package security

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/config"
	"github.com/custody-dev/custody/controllers/syncer/credential"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// requestToken requests, with cfg, a token of the ServiceAccount custody-system/name.
func requestToken(ctx SpecContext, cfg *rest.Config, name string) error {
	seconds := int64(600)
	_, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().ServiceAccounts("custody-system").CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	return err
}

// withToken is the hub config of cfg, with token instead of its credential.
func withToken(cfg *rest.Config, token string) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.BearerToken, cfg.BearerTokenFile, cfg.WrapTransport = token, "", nil
	return cfg
}

var _ = Describe("A member's hub credential", func() {
	It("expires within join's --credential-ttl, and may renew only itself", func(ctx SpecContext) {
		for _, m := range []string{"m1", "m2"} {
			cfg := env.SyncerHubConfig(m)
			t, err := credential.Parse(cfg.BearerToken)
			Expect(err).NotTo(HaveOccurred())
			Expect(t.Namespace + "/" + t.Name).To(Equal("custody-system/" + workloadv1alpha1.SyncerIdentity(m)))
			Expect(t.Expires()).To(BeTrue(), "the token join made never expires")
			Expect(t.Lifetime()).To(Equal(time.Hour), "join's default --credential-ttl is 1h")
			Expect(t.Expiry).To(BeTemporally("<=", time.Now().Add(time.Hour)))
			AddReportEntry("token of "+m, t.Expiry.UTC().String())

			By(m + " requesting a token of its own identity")
			Expect(requestToken(ctx, cfg, workloadv1alpha1.SyncerIdentity(m))).To(Succeed())
		}
		By("m1 requesting a token of m2's identity, or of another ServiceAccount")
		for _, other := range []string{workloadv1alpha1.SyncerIdentity("m2"), "default", environment.MetricsReader} {
			err := requestToken(ctx, env.SyncerHubConfig("m1"), other)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "a token of %s: %v", other, err)
		}
	})

	It("is renewed by the syncer, which keeps syncing and keeps the new token in the member's Secret", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		r := env.SyncerCredential(key)
		Expect(r).NotTo(BeNil())
		before := r.Token()

		By("renewing now, as the syncer does when half of the token's lifetime has passed")
		start := time.Now()
		r.RenewNow()
		Eventually(func() string { return r.Token().Raw }).WithContext(ctx).ShouldNot(Equal(before.Raw))
		after := r.Token()
		AddReportEntry("renewal", time.Since(start).String())
		Expect(after.SameAccount(before)).To(BeTrue())
		Expect(after.Lifetime()).To(Equal(before.Lifetime()))
		Expect(after.Expiry).To(BeTemporally(">=", before.Expiry))

		By("keeping the new token in the member's Secret, for a syncer that restarts")
		member := env.Member(key)
		Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(member.Client.Get(ctx, environment.SyncerHubKubeconfigSecret, s)).To(Succeed())
			cfg, err := clientcmd.RESTConfigFromKubeConfig(s.Data[config.HubKubeconfigKey])
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.BearerToken).To(Equal(after.Raw))
		}).WithContext(ctx).Should(Succeed())
		Expect(framework.Client(withToken(env.SyncerHubConfig(key), after.Raw)).Get(ctx, client.ObjectKey{Name: key}, &workloadv1alpha1.SyncTarget{})).To(Succeed())

		By("syncing what the hub places on its target after the renewal")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "after-renewal"}, Data: map[string]string{"k": "v"}}
		Expect(user.Create(ctx, cm)).To(Succeed())
		Eventually(func() error {
			return member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, cm.Name), &corev1.ConfigMap{})
		}).WithContext(ctx).Should(Succeed())
	})

	It("is revoked at once by unjoin --revoke, while what its target holds stays held", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "held"}}
		Expect(user.Create(ctx, cm)).To(Succeed())
		member := env.Member(key)
		Eventually(func() error {
			return member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, cm.Name), &corev1.ConfigMap{})
		}).WithContext(ctx).Should(Succeed())
		joined, renewed := env.SyncerHubConfig(key), withToken(env.SyncerHubConfig(key), env.SyncerCredential(key).Token().Raw)
		DeferCleanup(func(ctx SpecContext) {
			Expect(env.Rejoin(ctx, key)).To(Succeed())
			Expect(env.WaitReady(ctx)).To(Succeed())
		}, NodeTimeout(3*time.Minute))

		code, out, errOut := env.Custody(ctx, "unjoin", key, "--revoke", "--yes", "--timeout=0")
		returned := time.Now()
		Expect(code).To(Equal(1), "unjoin of a target that holds a namespace, with no --force:\n%s%s", out, errOut)
		Expect(out).To(ContainSubstring("the hub identity of " + key + " is revoked"))
		Expect(errOut).To(ContainSubstring("still holds"))

		By("refusing the identity its reads at once: its grants go with it")
		Eventually(func() bool {
			err := framework.Client(renewed).Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
			return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
		}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(10 * time.Millisecond).Should(BeTrue())
		refused := time.Since(returned)
		AddReportEntry("revocation to the first refused read in a placed namespace", refused.String())
		Expect(refused).To(BeNumerically("<", 5*time.Second), "the grants outlived the identity")

		By("refusing every token of the identity, join's and the renewed one")
		var first time.Duration
		for _, cfg := range []*rest.Config{joined, renewed} {
			Eventually(func() bool {
				err := framework.Client(cfg).Get(ctx, client.ObjectKey{Name: key}, &workloadv1alpha1.SyncTarget{})
				return apierrors.IsUnauthorized(err)
			}).WithContext(ctx).WithTimeout(30 * time.Second).WithPolling(50 * time.Millisecond).Should(BeTrue())
			if first == 0 {
				first = time.Since(returned)
			}
		}
		AddReportEntry("revocation to the first 401", first.String())
		GinkgoWriter.Printf("unjoin --revoke returned; the syncer's token got 401 after %s\n", first)

		By("leaving the namespace held by the target: its revoked syncer cannot let go of it")
		n := &corev1.Namespace{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
		Expect(workloadv1alpha1.Targets(n)).To(ContainElement(key))
		t := &workloadv1alpha1.SyncTarget{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: key}, t)).To(Succeed())
		Expect(t.Spec.Evict).To(BeTrue())
	})

	It("comes in a join manifest that holds no token Secret, and leaves none on the hub", func(ctx SpecContext) {
		for _, m := range []string{"m1", "m2"} {
			data, err := os.ReadFile(filepath.Join(env.Dir, "join", m+".yaml"))
			Expect(err).NotTo(HaveOccurred())
			objs, err := testbed.Decode(data)
			Expect(err).NotTo(HaveOccurred())
			for _, o := range objs {
				if o.GetKind() != "Secret" {
					continue
				}
				s := &corev1.Secret{}
				Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, s)).To(Succeed())
				Expect(s.Type).NotTo(Equal(corev1.SecretTypeServiceAccountToken), "secret %s", s.Name)
			}
		}
		secrets := &corev1.SecretList{}
		Expect(hub.List(ctx, secrets, client.InNamespace("custody-system"))).To(Succeed())
		for _, s := range secrets.Items {
			Expect(s.Type).NotTo(Equal(corev1.SecretTypeServiceAccountToken), "secret %s", s.Name)
			Expect(strings.HasPrefix(s.Name, "custody-syncer-target-")).To(BeFalse(), "secret %s", s.Name)
		}
	})
})
