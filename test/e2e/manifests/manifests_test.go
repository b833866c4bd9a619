package manifests

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/access"
)

const partOf = "app.kubernetes.io/part-of"

// memberIDs are the objects of config/member, as ids names them; the ConfigMap's name ends
// in kustomize's hash.
var memberIDs = []any{
	"Namespace custody-system",
	"ServiceAccount custody-system/custody-syncer",
	"ClusterRole custody-syncer-member",
	"ClusterRoleBinding custody-syncer-member",
	"ClusterRole custody-metrics-reader",
	"Role custody-system/custody-syncer-hub-kubeconfig",
	"RoleBinding custody-system/custody-syncer-hub-kubeconfig",
	HavePrefix("ConfigMap custody-system/custody-syncer-"),
	"Deployment custody-system/custody-syncer",
}

// One ordered container: the last specs run Custody from both overlays, once applied.
var _ = Describe("config/", Ordered, func() {
	var hubObjs, memberObjs rendered
	BeforeAll(func() {
		hubObjs = render(filepath.Join(root, "config", "default"))
		memberObjs = render(filepath.Join(root, "config", "member"))
	})

	Describe("the hub's overlay, config/default", func() {
		It("holds the namespace, Custody's CRDs, the controller with its RBAC, the syncers' hub role and their admission policy, and no syncer identity", func() {
			want := []string{
				"Namespace custody-system",
				"Namespace " + workloadv1alpha1.HeartbeatNamespace,
				"ServiceAccount custody-system/custody-controller",
				"ClusterRole custody-controller",
				"ClusterRoleBinding custody-controller",
				"Role custody-system/custody-controller",
				"RoleBinding custody-system/custody-controller",
				"Role custody-system/custody-controller-leader-election",
				"RoleBinding custody-system/custody-controller-leader-election",
				"Deployment custody-system/custody-controller",
				"Service custody-system/custody-controller-metrics",
				"ClusterRole custody-syncer-hub",
				"ClusterRole custody-syncer-namespace",
				"ClusterRole custody-syncer-replica",
				"Role " + workloadv1alpha1.HeartbeatNamespace + "/custody-syncer-heartbeat",
				"RoleBinding " + workloadv1alpha1.HeartbeatNamespace + "/custody-syncer-heartbeat",
				"ClusterRole custody-metrics-reader",
				"ValidatingAdmissionPolicy custody-syncer-target",
				"ValidatingAdmissionPolicyBinding custody-syncer-target",
				"ValidatingAdmissionPolicy custody-protocol-keys",
				"ValidatingAdmissionPolicyBinding custody-protocol-keys",
				"ValidatingAdmissionPolicy custody-controller-drills",
				"ValidatingAdmissionPolicyBinding custody-controller-drills",
			}
			for _, name := range crdNames() {
				want = append(want, "CustomResourceDefinition "+name)
			}
			Expect(hubObjs.ids()).To(ConsistOf(want))
			for _, o := range hubObjs {
				Expect(o.GetLabels()).To(HaveKeyWithValue(partOf, "custody"), id(o))
			}
		})

		It("runs the controller in-cluster, with leader election in custody-system, probes and metrics, unprivileged", func() {
			d := &appsv1.Deployment{}
			hubObjs.decode("Deployment", namespace, "custody-controller", d)
			c := expectRunnable(d, "controller", "custody-controller:latest", controllerSA)
			Expect(c.Args).To(ContainElement("--leader-elect"))
			ns, ok := flagValue(c.Args, "leader-election-namespace")
			Expect(ok).To(BeTrue())
			Expect(ns).To(Equal(namespace))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--kubeconfig")))
			Expect(ptr.Deref(d.Spec.Template.Spec.AutomountServiceAccountToken, true)).To(BeTrue(), "the token of the in-cluster config")

			svc := &corev1.Service{}
			hubObjs.decode("Service", namespace, "custody-controller-metrics", svc)
			Expect(svc.Spec.Selector).NotTo(BeEmpty())
			Expect(labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels))).To(BeTrue())
			Expect(svc.Spec.Ports).To(HaveLen(1))
			Expect(portOf(c, svc.Spec.Ports[0].TargetPort)).To(Equal(listensOn(c, "metrics-bind-address")))
		})

		It("binds each role to the identity that needs it", func() {
			hubObjs.expectBound("ClusterRoleBinding", "custody-controller", "ClusterRole", "custody-controller", controllerSA)
			hubObjs.expectBound("RoleBinding", "custody-controller-leader-election", "Role", "custody-controller-leader-election", controllerSA)
			hubObjs.expectBound("RoleBinding", "custody-controller", "Role", "custody-controller", controllerSA)
		})

		It("is accepted by a hub, CRDs first", func(ctx SpecContext) {
			apply(ctx, bed.Hub.Client, hubObjs)
		})

		It("lets the controller do its work on the hub, and not more", func(ctx SpecContext) {
			expectAccess(ctx, bed.Hub.Config, controllerSA, []string{
				"watch placements.scheduling.custody.dev",
				"patch placements.scheduling.custody.dev",
				"update placements.scheduling.custody.dev/finalizers",
				"patch placements.scheduling.custody.dev/status",
				"watch locations.scheduling.custody.dev",
				"patch locations.scheduling.custody.dev/status",
				"watch synctargets.workload.custody.dev",
				"patch synctargets.workload.custody.dev/status",
				"create volumeownerships.storage.custody.dev -n team-a",
				"patch volumeownerships.storage.custody.dev/status -n team-a",
				"create fences.storage.custody.dev",
				"delete fences.storage.custody.dev",
				"patch fences.storage.custody.dev/status",
				"update persistentvolumeclaims -n team-a",
				"delete persistentvolumes",
				"patch namespaces",
				"patch deployments.apps -n team-a",
				"watch leases.coordination.k8s.io",
				"create leases.coordination.k8s.io -n custody-system",
				"update leases.coordination.k8s.io -n custody-system",
				"create events -n custody-system",
				"create events.events.k8s.io -n team-a",
				"create volumereplications.storage.custody.dev -n team-a",
				"patch locationpairs.scheduling.custody.dev/status",
				"create secrets -n custody-system",
				"get secrets -n custody-system",
				"create tokenreviews.authentication.k8s.io",
				"create subjectaccessreviews.authorization.k8s.io",
				"patch pods -n team-a",
				"patch jobs.batch -n team-a",
				"write protocolkeys.workload.custody.dev",
				// A drill's sandboxes: made, with copies of a namespace's objects, and removed.
				"patch drills.scheduling.custody.dev",
				"patch drills.scheduling.custody.dev/status",
				"create namespaces",
				"delete namespaces",
				"create placements.scheduling.custody.dev",
				"delete placements.scheduling.custody.dev",
				"create secrets -n team-a",
				"create persistentvolumeclaims -n team-a",
				"create deployments.apps -n team-a",
				"create networkpolicies.networking.k8s.io -n team-a",
			}, []string{
				"create leases.coordination.k8s.io -n kube-system",
				"update leases.coordination.k8s.io -n team-a",
				"delete synctargets.workload.custody.dev",
				"create drills.scheduling.custody.dev",
				"delete drills.scheduling.custody.dev",
				"delete secrets -n team-a",
				"delete deployments.apps -n team-a",
				"delete networkpolicies.networking.k8s.io -n team-a",
				"create pods -n team-a",
				"create clusterrolebindings.rbac.authorization.k8s.io",
			})
		})

		It("lets the controller grant a syncer the syncer roles in a namespace, and no other role", func(ctx SpecContext) {
			c := clientAs(bed.Hub.Config, controllerSA)
			Expect(client.IgnoreAlreadyExists(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))).To(Succeed())
			grant := func(role string) error {
				return c.Create(ctx, &rbacv1.RoleBinding{
					ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "grant-" + role},
					RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
					Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: "custody-syncer-target-probe"}},
				}, client.DryRunAll)
			}
			Eventually(func() error { return grant(access.NamespaceRole) }).WithContext(ctx).Should(Succeed())
			Expect(grant(access.ReplicaRole)).To(Succeed())
			// A role with one right the controller does not hold: exec into a namespace's pods.
			exec := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "probe-exec"}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}},
			}}
			Expect(client.IgnoreAlreadyExists(bed.Hub.Client.Create(ctx, exec))).To(Succeed())
			for _, role := range []string{"cluster-admin", exec.Name} {
				err := grant(role)
				Expect(apierrors.IsForbidden(err)).To(BeTrue(), "binding %s: want forbidden, got %v", role, err)
			}
		})

		It("lets the controller list Custody's objects once their CRDs are served", func(ctx SpecContext) {
			c := clientAs(bed.Hub.Config, controllerSA)
			Eventually(func(g Gomega) {
				g.Expect(c.List(ctx, &schedulingv1alpha1.PlacementList{})).To(Succeed())
				g.Expect(c.List(ctx, &schedulingv1alpha1.LocationList{})).To(Succeed())
				g.Expect(c.List(ctx, &workloadv1alpha1.SyncTargetList{})).To(Succeed())
				g.Expect(c.List(ctx, &storagev1alpha1.VolumeOwnershipList{})).To(Succeed())
			}).WithContext(ctx).Should(Succeed())
		})

		It("lets a syncer bound to the syncers' hub role do its work on the hub, and read namespaced objects only where the controller grants them", func(ctx SpecContext) {
			// join binds the role to each target's identity; a probe identity stands for one.
			const probe = "custody-syncer-probe"
			Expect(bed.Hub.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: probe},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: syncerHubRole},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: probe}},
			})).To(Succeed())
			expectAccess(ctx, bed.Hub.Config, probe, []string{
				"watch synctargets.workload.custody.dev",
				"patch synctargets.workload.custody.dev/status",
				"create leases.coordination.k8s.io -n " + workloadv1alpha1.HeartbeatNamespace,
				"update leases.coordination.k8s.io -n " + workloadv1alpha1.HeartbeatNamespace,
				"create namespaces",
				"create persistentvolumes",
				"delete persistentvolumes",
				"watch fences.storage.custody.dev",
				"patch fences.storage.custody.dev",
				"patch fences.storage.custody.dev/status",
				"watch volumereplications.storage.custody.dev -n team-a",
				"patch volumereplications.storage.custody.dev -n team-a",
				"patch volumereplications.storage.custody.dev/status -n team-a",
			}, []string{
				"create fences.storage.custody.dev",
				"delete fences.storage.custody.dev",
				"create volumereplications.storage.custody.dev -n team-a",
				"patch synctargets.workload.custody.dev",
				"delete synctargets.workload.custody.dev",
				"list placements.scheduling.custody.dev",
				"list volumeownerships.storage.custody.dev -n team-a",
				"watch persistentvolumeclaims -n team-a",
				"get secrets -n team-a",
				"list secrets",
				"list configmaps",
				"get secrets -n " + namespace,
				"get leases.coordination.k8s.io -n " + namespace,
				"create clusterrolebindings.rbac.authorization.k8s.io",
				"write protocolkeys.workload.custody.dev",
			})

			By("granting it team-a, as the controller does for a namespace placed on its target")
			Expect(client.IgnoreAlreadyExists(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}))).To(Succeed())
			Expect(bed.Hub.Client.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: probe},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: access.NamespaceRole},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: probe}},
			})).To(Succeed())
			expectAccess(ctx, bed.Hub.Config, probe, []string{
				"watch persistentvolumeclaims -n team-a",
				"create persistentvolumeclaims -n team-a",
				"patch persistentvolumeclaims/status -n team-a",
				"patch deployments.apps/status -n team-a",
				"get secrets -n team-a",
				"watch configmaps -n team-a",
			}, []string{
				"get secrets -n team-b",
				"create configmaps -n team-a",
				"delete persistentvolumeclaims -n team-a",
				"create rolebindings.rbac.authorization.k8s.io -n team-a",
			})
		})
	})

	Describe("a member's overlay, config/member", func() {
		It("holds the namespace, the syncer with its identity and role there, and the name of its SyncTarget", func() {
			Expect(memberObjs.ids()).To(ConsistOf(memberIDs...))
			for _, o := range memberObjs {
				Expect(o.GetLabels()).To(HaveKeyWithValue(partOf, "custody"), id(o))
			}
			memberObjs.expectBound("ClusterRoleBinding", "custody-syncer-member", "ClusterRole", "custody-syncer-member", syncerMemberSA)
		})

		It("runs one syncer at a time, in-cluster for the member, with the hub's kubeconfig mounted from its Secret", func() {
			d := &appsv1.Deployment{}
			memberObjs.decode("Deployment", namespace, "custody-syncer", d)
			c := expectRunnable(d, "syncer", "custody-syncer:latest", syncerMemberSA)
			Expect(d.Spec.Strategy.Type).To(Equal(appsv1.RecreateDeploymentStrategyType))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--member-kubeconfig")))
			Expect(c.Args).NotTo(ContainElement(HavePrefix("--kubeconfig")))
			Expect(ptr.Deref(d.Spec.Template.Spec.AutomountServiceAccountToken, true)).To(BeTrue(), "the token of the in-cluster config")

			path, ok := flagValue(c.Args, "hub-kubeconfig")
			Expect(ok).To(BeTrue())
			Expect(filepath.Base(path)).To(Equal("kubeconfig"), "the key of the Secret")
			mounts := slices.DeleteFunc(slices.Clone(c.VolumeMounts), func(m corev1.VolumeMount) bool {
				return m.MountPath != filepath.Dir(path)
			})
			Expect(mounts).To(HaveLen(1), "a mount at %s", filepath.Dir(path))
			Expect(mounts[0].ReadOnly).To(BeTrue())
			Expect(mounts[0].SubPath).To(BeEmpty())
			volumes := slices.DeleteFunc(slices.Clone(d.Spec.Template.Spec.Volumes), func(v corev1.Volume) bool {
				return v.Name != mounts[0].Name
			})
			Expect(volumes).To(HaveLen(1))
			Expect(volumes[0].Secret).NotTo(BeNil())
			Expect(volumes[0].Secret.SecretName).To(Equal("custody-syncer-hub-kubeconfig"))
			Expect(volumes[0].Secret.Items).To(BeEmpty())

			Expect(syncerArgs(memberObjs)).To(ContainElement("--sync-target-name=member-1"))
		})

		It("takes the name of the SyncTarget from an overlay of the user's own", func() {
			dir := GinkgoT().TempDir()
			base, err := filepath.Rel(dir, filepath.Join(root, "config", "member"))
			Expect(err).NotTo(HaveOccurred())
			Expect(os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(`resources:
- `+base+`
configMapGenerator:
- name: custody-syncer
  namespace: custody-system
  behavior: merge
  literals:
  - sync-target-name=eu-west-1
`), 0o644)).To(Succeed())
			Expect(syncerArgs(render(dir))).To(ContainElement("--sync-target-name=eu-west-1"))
		})

		It("is accepted by a member", func(ctx SpecContext) {
			apply(ctx, bed.Member(member).Client, memberObjs)
		})

		It("lets the syncer do its work in the member, and not more", func(ctx SpecContext) {
			expectAccess(ctx, bed.Member(member).Config, syncerMemberSA, []string{
				"create namespaces",
				"create deployments.apps -n team-a",
				"patch statefulsets.apps -n team-a",
				"delete jobs.batch -n team-a",
				"patch persistentvolumeclaims -n team-a",
				"delete persistentvolumeclaims -n team-a",
				"watch persistentvolumes",
				"watch pods",
				"watch storageclasses.storage.k8s.io",
				"create tokenreviews.authentication.k8s.io",
				"create subjectaccessreviews.authorization.k8s.io",
			}, []string{
				"list nodes",
				"delete storageclasses.storage.k8s.io",
				"create pods/exec -n team-a",
				"create roles.rbac.authorization.k8s.io -n team-a",
				"create clusterrolebindings.rbac.authorization.k8s.io",
			})
		})
	})

	It("ships no role that grants a wildcard verb, resource or API group", func() {
		all := append(slices.Clone(hubObjs), memberObjs...)
		for _, o := range all {
			if o.GetKind() != "ClusterRole" && o.GetKind() != "Role" {
				continue
			}
			// A Role's rules are a ClusterRole's.
			role := &rbacv1.ClusterRole{}
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, role)).To(Succeed(), id(o))
			Expect(role.Rules).NotTo(BeEmpty(), id(o))
			for _, rule := range role.Rules {
				for _, field := range [][]string{rule.Verbs, rule.Resources, rule.APIGroups, rule.NonResourceURLs} {
					Expect(field).NotTo(ContainElement(ContainSubstring("*")), "%s grants %v", id(o), rule)
				}
			}
		}
	})
})

var _ = Describe("The images", func() {
	It("build with the Go of go.mod, as the numeric non-root user that runAsNonRoot needs", func() {
		gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		Expect(err).NotTo(HaveOccurred())
		goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
		Expect(goVersion).NotTo(BeNil())
		for _, binary := range []string{"controller", "syncer"} {
			dockerfile, err := os.ReadFile(filepath.Join(root, "cmd", binary, "Dockerfile"))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(dockerfile)).To(MatchRegexp(`(?m)^ARG GO_VERSION=%s$`, regexp.QuoteMeta(string(goVersion[1]))), binary)
			Expect(string(dockerfile)).To(MatchRegexp(`(?m)^RUN CGO_ENABLED=0 .*go build .* \./cmd/%s$`, binary))
			Expect(string(dockerfile)).To(MatchRegexp(`(?m)^USER [1-9][0-9]*:[0-9]+$`), binary)
			Expect(string(dockerfile)).To(ContainSubstring(`ENTRYPOINT ["/%s"]`, binary))
		}
		dockerignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
		Expect(err).NotTo(HaveOccurred())
		Expect(regexp.MustCompile(`(?m)^\S+$`).FindAllString(string(dockerignore), -1)).To(ContainElements("bin/", ".custody/", "test/"))
	})
})
