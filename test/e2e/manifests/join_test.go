package manifests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/cmd/kubectl-custody/app"
	"github.com/custody-dev/custody/config"
	"github.com/custody-dev/custody/test/testbed"
)

// joined is the target that kubectl custody join registers for the bed's member.
const joined = "joined-m1"

// joinedSA is its syncer's hub identity.
var joinedSA = workloadv1alpha1.SyncerIdentity(joined)

// One ordered container: the hub gets config/default, then join runs against it and its
// manifest is applied to the member.
var _ = Describe("kubectl custody join", Ordered, func() {
	var (
		hubObjs  rendered
		manifest []byte
		// hubKubeconfig is the syncer's hub kubeconfig, as the manifest's Secret holds it.
		hubKubeconfig []byte
	)
	BeforeAll(func(ctx SpecContext) {
		hubObjs = render(filepath.Join(root, "config", "default"))
		apply(ctx, bed.Hub.Client, hubObjs)
	})

	It("refuses what the SyncTarget's validation refuses, creating nothing", func(ctx SpecContext) {
		r := join(ctx, bed.Hub.Kubeconfig, joined, "--storage-domain=zone-a", "--fencing-cidrs=10.0.0.0/33", "--network-fence-class=fast")
		r.failsWith(`the hub refuses synctarget ` + joined + `: SyncTarget.workload.custody.dev "` + joined + `" is invalid: spec.fencing.nodeCIDRs: Invalid value: every entry must be a CIDR such as 10.0.0.0/24`)
		expectNoIdentity(ctx, joined)
	})

	It("refuses a user who may not bind the identity, and deletes what it created", func(ctx SpecContext) {
		// The user may write SyncTargets and ServiceAccounts but not grant a role.
		user := "joiner"
		grant(ctx, user, []rbacv1.PolicyRule{
			{APIGroups: []string{workloadv1alpha1.GroupVersion.Group}, Resources: []string{"synctargets"}, Verbs: []string{"get", "create", "update"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"get", "create", "delete"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"get"}},
		})
		cfg, err := bed.Hub.UserConfig(user)
		Expect(err).NotTo(HaveOccurred())
		r := join(ctx, kubeconfigFile(cfg, user), joined, "--storage-domain=zone-a")
		r.failsWith(`writing clusterrolebinding.rbac.authorization.k8s.io/` + joinedSA + `: clusterrolebindings.rbac.authorization.k8s.io is forbidden: User "` +
			user + `" cannot create resource "clusterrolebindings" in API group "rbac.authorization.k8s.io" at the cluster scope`)
		Expect(r.errOut).To(HavePrefix("serviceaccount/" + joinedSA + " created\nserviceaccount/" + joinedSA + " deleted: rolled back\n"))
		expectNoIdentity(ctx, joined)
	})

	It("prints what it would create with --dry-run, creating nothing", func(ctx SpecContext) {
		r := join(ctx, bed.Hub.Kubeconfig, joined, "--storage-domain=zone-a", "--dry-run")
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(r.errOut).To(Equal(reportOf("created (server dry run)")))
		Expect(decodeAll(r.out).ids()).To(ContainElement("Deployment custody-system/custody-syncer"))
		expectNoIdentity(ctx, joined)
	})

	It("registers the target with an identity of its own, and writes the member's manifest", func(ctx SpecContext) {
		output := filepath.Join(GinkgoT().TempDir(), "member.yaml")
		r := join(ctx, bed.Hub.Kubeconfig, joined, "--storage-domain=zone-a", "--location-label=region=eu", "-o", output)
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(withoutToken(r.out)).To(Equal(reportOf("created") + "wrote " + output + ": apply it to the member cluster with kubectl apply -f " + output + "\n"))
		Expect(r.out).To(MatchRegexp(`\nserviceaccount/` + joinedSA + ` token requested, expires \S+\n`))
		var err error
		manifest, err = os.ReadFile(output)
		Expect(err).NotTo(HaveOccurred())

		st := &workloadv1alpha1.SyncTarget{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: joined}, st)).To(Succeed())
		Expect(st.Spec.StorageDomains).To(Equal([]string{"zone-a"}))
		Expect(st.Labels).To(HaveKeyWithValue("region", "eu"))
		Expect(st.Spec.Priority).To(Equal(int32(1)), "the CRD's default")
		expectBoundOnHub(ctx, joined)
	})

	It("runs again with the same result and a new token", func(ctx SpecContext) {
		r := join(ctx, bed.Hub.Kubeconfig, joined, "--storage-domain=zone-a", "--location-label=region=eu", "-o", "-")
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(withoutToken(r.errOut)).To(Equal(reportOf("unchanged")))
		before, again := decodeAll(string(manifest)), decodeAll(r.out)
		Expect(again.ids()).To(Equal(before.ids()))
		for i, o := range again {
			if o.GetKind() == "Secret" && o.GetName() == config.HubKubeconfigSecret {
				first, second := kubeconfigOf(before[i]), kubeconfigOf(o)
				Expect(second.Host).To(Equal(first.Host))
				Expect(second.CAData).To(Equal(first.CAData))
				Expect(second.BearerToken).NotTo(Equal(first.BearerToken))
				continue
			}
			Expect(o.Object).To(Equal(before[i].Object), id(o))
		}
	})

	It("writes a manifest of config/member for the target, with a hub kubeconfig, that the member accepts", func(ctx SpecContext) {
		objs := decodeAll(string(manifest))
		Expect(objs.ids()).To(ConsistOf(append(memberIDs, "Secret custody-system/"+config.HubKubeconfigSecret)...))
		for _, o := range objs {
			Expect(o.GetLabels()).To(HaveKeyWithValue(partOf, "custody"), id(o))
		}
		objs.expectBound("ClusterRoleBinding", "custody-syncer-member", "ClusterRole", "custody-syncer-member", syncerMemberSA)
		d := &appsv1.Deployment{}
		objs.decode("Deployment", namespace, "custody-syncer", d)
		expectRunnable(d, "syncer", "custody-syncer:latest", syncerMemberSA)
		Expect(syncerArgs(objs)).To(ContainElement("--sync-target-name=" + joined))

		apply(ctx, bed.Member(member).Client, objs)
		secret := &corev1.Secret{}
		Expect(bed.Member(member).Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: config.HubKubeconfigSecret}, secret)).To(Succeed())
		hubKubeconfig = secret.Data[config.HubKubeconfigKey]
		Expect(hubKubeconfig).NotTo(BeEmpty())
		Expect(bed.Member(member).Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "custody-syncer"}, &appsv1.Deployment{})).To(Succeed())
	})

	It("gives the syncer a hub kubeconfig that does a syncer's work for its target, and not more", func(ctx SpecContext) {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(hubKubeconfig)
		Expect(err).NotTo(HaveOccurred())
		admin, err := clientcmd.LoadFromFile(bed.Hub.Kubeconfig)
		Expect(err).NotTo(HaveOccurred())
		Expect(cfg.Host).To(Equal(admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster].Server), "the server of the current context")
		Expect(cfg.BearerToken).NotTo(BeEmpty())
		c, err := client.New(cfg, client.Options{Scheme: testbed.Scheme()})
		Expect(err).NotTo(HaveOccurred())

		review := &authenticationv1.SelfSubjectReview{}
		Expect(c.Create(ctx, review)).To(Succeed())
		Expect(review.Status.UserInfo.Username).To(Equal(userOf(joinedSA)))

		st := &workloadv1alpha1.SyncTarget{}
		Expect(c.Get(ctx, client.ObjectKey{Name: joined}, st)).To(Succeed())
		patch := client.MergeFrom(st.DeepCopy())
		st.Status.SyncedResources = []string{"persistentvolumeclaims"}
		Expect(c.Status().Patch(ctx, st, patch)).To(Succeed())

		lease := heartbeat(workloadv1alpha1.HeartbeatNamespace, joined)
		Expect(c.Create(ctx, lease)).To(Succeed())
		lease.Spec.RenewTime = ptr.To(metav1.NowMicro())
		Expect(c.Update(ctx, lease)).To(Succeed())
		// config/default's admission policy, applied moments ago, holds it to its own Lease.
		Eventually(func() error {
			return c.Create(ctx, heartbeat(workloadv1alpha1.HeartbeatNamespace, "not-"+joined), client.DryRunAll)
		}).WithContext(ctx).Should(MatchError(ContainSubstring(ruleLease+joined)), "writing another target's Lease")

		Expect(apierrors.IsForbidden(c.Delete(ctx, st))).To(BeTrue(), "deleting its SyncTarget")
		binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"}}
		Expect(apierrors.IsForbidden(c.Create(ctx, binding))).To(BeTrue(), "granting itself a role")
	})

	It("runs the controller and the joined syncer, as deployed, until the target is Ready", func(ctx SpecContext) {
		controller := &appsv1.Deployment{}
		hubObjs.decode("Deployment", namespace, "custody-controller", controller)
		path := filepath.Join(bed.Dir, "manifests", joined+"-hub.kubeconfig")
		Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
		Expect(os.WriteFile(path, hubKubeconfig, 0o600)).To(Succeed())
		runUntilReady(ctx, controller, append(syncerArgs(decodeAll(string(manifest))),
			"--hub-kubeconfig="+path,
			"--member-kubeconfig="+kubeconfigAs(bed.Member(member), syncerMemberSA)))
	}, NodeTimeout(3*time.Minute))
})

// pluginResult is what one run of kubectl custody printed, and its exit code.
type pluginResult struct {
	code        int
	out, errOut string
}

// join runs kubectl custody join in-process with kubeconfig.
func join(ctx context.Context, kubeconfig string, args ...string) pluginResult {
	return custody(ctx, kubeconfig, append([]string{"join"}, args...)...)
}

// custody runs kubectl custody in-process with kubeconfig.
func custody(ctx context.Context, kubeconfig string, args ...string) pluginResult {
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := app.Run(ctx, append([]string{"--kubeconfig", kubeconfig}, args...), streams)
	GinkgoWriter.Printf("$ kubectl custody %s\n%s%s(exit %d)\n", strings.Join(args, " "), out.String(), errOut.String(), code)
	return pluginResult{code: code, out: out.String(), errOut: errOut.String()}
}

// failsWith checks that the run exited 1 with no manifest, and that its last line on stderr,
// after what it reported, is "error: <message>".
func (r pluginResult) failsWith(message string) {
	GinkgoHelper()
	Expect(r.out).To(BeEmpty())
	lines := strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n")
	Expect(lines[len(lines)-1]).To(Equal("error: " + message))
	Expect(r.code).To(Equal(1))
}

// reportOf is join's report of the hub objects of the joined target, each with what
// happened to it, without the line of the token it requested (withoutToken).
func reportOf(what string) string {
	var b strings.Builder
	for _, name := range []string{
		"serviceaccount/" + joinedSA,
		"clusterrolebinding.rbac.authorization.k8s.io/" + joinedSA,
		"role.rbac.authorization.k8s.io/" + joinedSA + "-token",
		"rolebinding.rbac.authorization.k8s.io/" + joinedSA + "-token",
		"synctarget.workload.custody.dev/" + joined,
	} {
		b.WriteString(name + " " + what + "\n")
	}
	return b.String()
}

// withoutToken is join's report without the line that says when the token it requested
// expires.
func withoutToken(report string) string {
	lines := strings.SplitAfter(report, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, " token requested, expires ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}

// kubeconfigOf is the hub config of the kubeconfig in the member Secret s.
func kubeconfigOf(s *unstructured.Unstructured) *rest.Config {
	GinkgoHelper()
	secret := &corev1.Secret{}
	Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(s.Object, secret)).To(Succeed())
	cfg, err := clientcmd.RESTConfigFromKubeConfig(secret.Data[config.HubKubeconfigKey])
	Expect(err).NotTo(HaveOccurred())
	return cfg
}

// expectNoIdentity checks that the hub holds nothing of target: its SyncTarget and the
// identity join makes.
func expectNoIdentity(ctx context.Context, target string) {
	GinkgoHelper()
	sa := workloadv1alpha1.SyncerIdentity(target)
	for _, obj := range []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: sa}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa + "-token"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa + "-token"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa + "-token"}},
		&workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: target}},
	} {
		err := bed.Hub.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s: %v", obj, obj.GetName(), err)
	}
}

// expectBoundOnHub checks that target's identity is bound to the syncers' hub role and to
// the Role that lets it request tokens of itself alone, and that it has no token Secret.
func expectBoundOnHub(ctx context.Context, target string) {
	GinkgoHelper()
	sa := workloadv1alpha1.SyncerIdentity(target)
	Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: sa}, &corev1.ServiceAccount{})).To(Succeed())
	b := &rbacv1.ClusterRoleBinding{}
	Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: sa}, b)).To(Succeed())
	Expect(b.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: syncerHubRole}))
	Expect(b.Subjects).To(ConsistOf(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa}))
	r := &rbacv1.Role{}
	Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: sa + "-token"}, r)).To(Succeed())
	Expect(r.Rules).To(Equal([]rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{sa},
	}, {
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"custody-hub-identity"},
	}}))
	rb := &rbacv1.RoleBinding{}
	Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: sa + "-token"}, rb)).To(Succeed())
	Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: sa + "-token"}))
	Expect(rb.Subjects).To(ConsistOf(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: sa}))
	err := bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: sa + "-token"}, &corev1.Secret{})
	Expect(apierrors.IsNotFound(err)).To(BeTrue(), "a token Secret: %v", err)
}

// decodeAll decodes a multi-document YAML manifest.
func decodeAll(manifest string) rendered {
	GinkgoHelper()
	objs, err := testbed.Decode([]byte(manifest))
	Expect(err).NotTo(HaveOccurred())
	return objs
}

// grant gives user the rules on the hub through a ClusterRole and binding of its own.
func grant(ctx context.Context, user string, rules []rbacv1.PolicyRule) {
	GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}
	Expect(bed.Hub.Client.Create(ctx, role)).To(Succeed())
	Expect(bed.Hub.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// kubeconfigFile writes a kubeconfig of cfg, authenticated by its client certificate, and
// returns its path.
func kubeconfigFile(cfg *rest.Config, user string) string {
	GinkgoHelper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["hub"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: user}
	kc.CurrentContext = "hub"
	path := filepath.Join(GinkgoT().TempDir(), user+".kubeconfig")
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	return path
}
