package security

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

const domain = "shared"

// Messages of config/admission's policies.
const (
	ruleHubSource = "custody: a syncer may only hold, let go of and acknowledge the removal of what the hub places on its target"
	ruleNamespace = "custody: a syncer may only create objects in namespaces placed on its target"
	ruleKeys      = "custody: only Custody writes its labels, annotations and finalizers"
	ruleBinding   = "custody: only Custody binds a claim to a volume"
)

// tenant makes a namespace of its own and a user who may do anything in it and nothing
// elsewhere, as a platform gives a team its namespace; placed, the namespace runs in
// Location "loc". It returns the namespace and a client acting as its user.
func tenant(ctx context.Context, placed bool) (string, client.Client) {
	GinkgoHelper()
	ns := "team-" + rand.String(5)
	Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{framework.AppLabel: ns}}})).To(Succeed())
	all := []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
	Expect(hub.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}, Rules: all})).To(Succeed())
	user := ns + "-owner"
	Expect(hub.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "owner"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	})).To(Succeed())
	if placed {
		place(ctx, ns)
	}
	return ns, framework.ClientAs(env.Hub.Config, user)
}

// place places the tenant's namespace in Location "loc".
func place(ctx context.Context, ns string) {
	GinkgoHelper()
	Expect(hub.Create(ctx, framework.Placement(ns, "loc"))).To(Succeed())
}

// syncer is a client acting as the member's syncer, with the token of its target's identity.
func syncer(member string) client.Client { return framework.Client(env.SyncerHubConfig(member)) }

// placedOn waits until the namespace is placed on a target, and returns the target.
func placedOn(ctx context.Context, ns string) string {
	GinkgoHelper()
	var key string
	Eventually(func(g Gomega) {
		n := &corev1.Namespace{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
		keys := workloadv1alpha1.Targets(n)
		g.Expect(keys).To(HaveLen(1))
		key = keys[0]
	}).WithContext(ctx).Should(Succeed())
	return key
}

// expectDenied checks that err is RBAC's denial: the identity holds no grant for the request.
func expectDenied(err error) {
	GinkgoHelper()
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want forbidden, got %v", err)
	Expect(err).To(MatchError(ContainSubstring("cannot")))
}

// expectRefused checks that err is an admission policy's denial, with the message of the rule.
func expectRefused(err error, rule string) {
	GinkgoHelper()
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want forbidden, got %v", err)
	Expect(err).To(MatchError(ContainSubstring(rule)))
}
