package manifests

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

const (
	// namespace is where Custody runs, in the hub and in every member.
	namespace = "custody-system"
	// member is the bed's member cluster.
	member = "m1"
	// The ServiceAccounts the manifests run Custody as, all in custody-system.
	controllerSA   = "custody-controller"
	syncerMemberSA = "custody-syncer"
	// syncerHubRole is the ClusterRole that join binds each syncer's hub identity to.
	syncerHubRole = "custody-syncer-hub"
)

// userOf is the user name of the ServiceAccount sa of custody-system.
func userOf(sa string) string { return "system:serviceaccount:" + namespace + ":" + sa }

// rendered is the output of a kustomization, in kustomize's order.
type rendered []*unstructured.Unstructured

// render builds the kustomization in dir as `kubectl apply -k` does.
func render(dir string) rendered {
	objs, err := testbed.Render(dir)
	Expect(err).NotTo(HaveOccurred())
	return objs
}

// idOf names an object as "Kind namespace/name", or "Kind name" when it is cluster-scoped.
func idOf(kind, ns, name string) string {
	if ns == "" {
		return kind + " " + name
	}
	return kind + " " + ns + "/" + name
}

func id(o *unstructured.Unstructured) string { return idOf(o.GetKind(), o.GetNamespace(), o.GetName()) }

func (r rendered) ids() []string {
	ids := make([]string, 0, len(r))
	for _, o := range r {
		ids = append(ids, id(o))
	}
	return ids
}

// decode finds the object of that kind, namespace ("" when cluster-scoped) and name, and
// decodes it into into, failing on any field the type does not know.
func (r rendered) decode(kind, ns, name string, into runtime.Object) {
	GinkgoHelper()
	for _, o := range r {
		if o.GetKind() == kind && o.GetNamespace() == ns && o.GetName() == name {
			Expect(runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true)).To(Succeed(), id(o))
			return
		}
	}
	Fail(fmt.Sprintf("no %s %s/%s among %v", kind, ns, name, r.ids()))
}

// crdNames reads the names of the CRDs that `make manifests` writes to config/crd/bases.
func crdNames() []string {
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).NotTo(BeEmpty())
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		crd := &apiextensionsv1.CustomResourceDefinition{}
		Expect(yaml.Unmarshal(data, crd)).To(Succeed(), f)
		names = append(names, crd.Name)
	}
	return names
}

// onlyContainer returns the Deployment's one container, which must be called name.
func onlyContainer(d *appsv1.Deployment, name string) corev1.Container {
	Expect(d.Spec.Template.Spec.Containers).To(HaveLen(1), d.Name)
	c := d.Spec.Template.Spec.Containers[0]
	Expect(c.Name).To(Equal(name))
	return c
}

// flagValue returns the value of --name=value in args, or "" and false.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// listensOn returns the port of the address that flag --name of c sets.
func listensOn(c corev1.Container, name string) string {
	addr, ok := flagValue(c.Args, name)
	Expect(ok).To(BeTrue(), "%s has no --%s", c.Name, name)
	_, port, err := net.SplitHostPort(addr)
	Expect(err).NotTo(HaveOccurred(), "--%s=%s", name, addr)
	return port
}

// portOf returns the number of p, a port of c by number or by name.
func portOf(c corev1.Container, p intstr.IntOrString) string {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return fmt.Sprint(cp.ContainerPort)
		}
	}
	Fail(fmt.Sprintf("%s has no port %s", c.Name, p.String()))
	return ""
}

// expectRunnable checks what the controller and the syncer Deployments share: one replica
// run by the ServiceAccount sa, the probes on /healthz and /readyz at the port of
// --health-probe-bind-address, a metrics port at --metrics-bind-address, requests and
// limits, and a non-root container with a read-only root filesystem and no privileges.
func expectRunnable(d *appsv1.Deployment, container, image, sa string) corev1.Container {
	GinkgoHelper()
	Expect(d.Namespace).To(Equal(namespace))
	Expect(d.Spec.Replicas).To(HaveValue(Equal(int32(1))))
	pod := d.Spec.Template.Spec
	Expect(pod.ServiceAccountName).To(Equal(sa))
	c := onlyContainer(d, container)
	Expect(c.Image).To(Equal(image))

	probes := listensOn(c, "health-probe-bind-address")
	for path, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
		Expect(probe).NotTo(BeNil(), "%s probe", path)
		Expect(probe.HTTPGet).NotTo(BeNil(), "%s probe", path)
		Expect(probe.HTTPGet.Path).To(Equal(path))
		Expect(portOf(c, probe.HTTPGet.Port)).To(Equal(probes), "%s probe", path)
	}
	Expect(portOf(c, intstr.FromString("metrics"))).To(Equal(listensOn(c, "metrics-bind-address")))

	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		Expect(c.Resources.Requests).To(HaveKey(r))
		Expect(c.Resources.Limits).To(HaveKey(r))
		limit, request := c.Resources.Limits[r], c.Resources.Requests[r]
		Expect(limit.Cmp(request)).To(BeNumerically(">=", 0), "%s limit below request", r)
	}

	Expect(pod.SecurityContext).NotTo(BeNil())
	Expect(pod.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
	Expect(c.SecurityContext).NotTo(BeNil())
	Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	Expect(c.SecurityContext.Capabilities).NotTo(BeNil())
	Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")))
	return c
}

// expectBound checks that the rendered binding grants the role to the ServiceAccount sa of
// custody-system, and that the role and the account are rendered too. A RoleBinding and its
// Role live in custody-system.
func (r rendered) expectBound(bindingKind, binding, roleKind, role, sa string) {
	GinkgoHelper()
	var (
		ref      rbacv1.RoleRef
		subjects []rbacv1.Subject
		roleNS   string
	)
	switch bindingKind {
	case "ClusterRoleBinding":
		b := &rbacv1.ClusterRoleBinding{}
		r.decode(bindingKind, "", binding, b)
		ref, subjects = b.RoleRef, b.Subjects
	case "RoleBinding":
		b := &rbacv1.RoleBinding{}
		r.decode(bindingKind, namespace, binding, b)
		ref, subjects, roleNS = b.RoleRef, b.Subjects, namespace
	default:
		Fail("not a binding kind: " + bindingKind)
	}
	Expect(ref).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: roleKind, Name: role}), "%s %s", bindingKind, binding)
	Expect(subjects).To(ConsistOf(rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: namespace}),
		"%s %s", bindingKind, binding)
	Expect(r.ids()).To(ContainElements(idOf(roleKind, roleNS, role), idOf("ServiceAccount", namespace, sa)))
}

// apply applies the objects with server-side apply: the CRDs first, waiting until they are
// established, then the rest in kustomize's order, which puts namespaces first.
func apply(ctx context.Context, c client.Client, objs rendered) {
	GinkgoHelper()
	Expect(testbed.Apply(ctx, c, "custody-manifests-test", objs)).To(Succeed())
}

// clientAs returns a client of cfg's server that acts as the ServiceAccount sa.
func clientAs(cfg *rest.Config, sa string) client.Client {
	GinkgoHelper()
	return framework.ClientAs(cfg, userOf(sa))
}

// kubeconfigAs writes a kubeconfig of the cluster that acts as the ServiceAccount sa, and
// returns its path. It lies in the bed's directory, so that the bed's reaper stops the
// processes that name it if the test process dies.
func kubeconfigAs(c *testbed.Cluster, sa string) string {
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	for _, user := range cfg.AuthInfos {
		user.Impersonate = userOf(sa)
	}
	path := filepath.Join(bed.Dir, "manifests", c.Name+"-"+sa+".kubeconfig")
	Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
	Expect(clientcmd.WriteToFile(*cfg, path)).To(Succeed())
	return path
}

// expectAccess checks, with SelfSubjectAccessReviews made as the ServiceAccount sa, that it
// may do each request of may and none of mayNot. A request reads as kubectl auth can-i's:
// "verb resource[.group][/subresource] [-n namespace]".
func expectAccess(ctx context.Context, cfg *rest.Config, sa string, may, mayNot []string) {
	GinkgoHelper()
	c := clientAs(cfg, sa)
	var wrong []string
	for _, want := range []struct {
		allowed  bool
		requests []string
	}{{true, may}, {false, mayNot}} {
		for _, q := range want.requests {
			review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: attributes(q),
			}}
			Expect(c.Create(ctx, review)).To(Succeed(), q)
			if review.Status.Allowed != want.allowed {
				wrong = append(wrong, fmt.Sprintf("allowed=%t: %s", review.Status.Allowed, q))
			}
		}
	}
	Expect(wrong).To(BeEmpty(), "what %s may do", userOf(sa))
}

// attributes parses "verb resource[.group][/subresource] [-n namespace]".
func attributes(q string) *authorizationv1.ResourceAttributes {
	f := strings.Fields(q)
	Expect(len(f) == 2 || (len(f) == 4 && f[2] == "-n")).To(BeTrue(), "bad request %q", q)
	resource, sub, _ := strings.Cut(f[1], "/")
	gr := schema.ParseGroupResource(resource)
	a := &authorizationv1.ResourceAttributes{Verb: f[0], Group: gr.Group, Resource: gr.Resource, Subresource: sub}
	if len(f) == 4 {
		a.Namespace = f[3]
	}
	return a
}

// build builds the binary of the package cmd/name into a directory of the spec.
func build(ctx context.Context, name string) string {
	out := filepath.Join(GinkgoT().TempDir(), name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/"+name)
	cmd.Dir = root
	output, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build ./cmd/%s: %s", name, output)
	return out
}

// process is a binary of cmd/ that a spec runs.
type process struct {
	name    string
	probe   string // the address of /healthz and /readyz
	metrics string // the address of /metrics, served as its flags say
	log     *gbytes.Buffer
	done    chan struct{}
	err     error // how it ended, once done is closed
}

// start builds cmd/name and runs it with args, its metrics and its probes on free local
// ports, keeping its logs and writing them to the GinkgoWriter. At the end of the spec it stops the process
// with SIGTERM, as the kubelet would, and expects it to end cleanly.
func start(ctx context.Context, name string, args []string) *process {
	GinkgoHelper()
	binary := build(ctx, name)
	p := &process{name: name, log: gbytes.NewBuffer(), done: make(chan struct{})}
	for _, addr := range []*string{&p.probe, &p.metrics} {
		var err error
		*addr, err = testbed.FreeAddr()
		Expect(err).NotTo(HaveOccurred())
	}
	cmd := exec.Command(binary, append(slices.Clone(args), "--metrics-bind-address="+p.metrics, "--health-probe-bind-address="+p.probe)...)
	cmd.Stdout = io.MultiWriter(GinkgoWriter, p.log)
	cmd.Stderr = cmd.Stdout
	Expect(cmd.Start()).To(Succeed())
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	DeferCleanup(func() {
		Expect(cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
		Eventually(p.done).WithTimeout(30 * time.Second).Should(BeClosed())
		Expect(p.err).NotTo(HaveOccurred(), "%s on SIGTERM", name)
	})
	return p
}

// running fails once the process has ended.
func (p *process) running() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s ended: %v", p.name, p.err)
	default:
		return nil
	}
}

// forbidden returns the first line of the process's logs that says it was forbidden
// something, or "": an informer that may not list logs one and retries.
func (p *process) forbidden() string {
	for line := range strings.Lines(string(p.log.Contents())) {
		if strings.Contains(line, "forbidden") {
			return line
		}
	}
	return ""
}

// get fails unless the process is running and answers 200 at path of its probe endpoint.
func (p *process) get(ctx context.Context, path string) error {
	if err := p.running(); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.probe+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", p.name, path, resp.Status)
	}
	return nil
}

// expand replaces the $(VAR) references of args with the values of env, as the kubelet does.
func expand(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// syncerArgs returns the syncer's arguments as its container sees them: with the values of
// the environment variables it reads from rendered ConfigMaps, or is given, expanded.
func syncerArgs(objs rendered) []string {
	GinkgoHelper()
	d := &appsv1.Deployment{}
	objs.decode("Deployment", namespace, "custody-syncer", d)
	c := onlyContainer(d, "syncer")
	env := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
			continue
		}
		ref := e.ValueFrom.ConfigMapKeyRef
		Expect(ref).NotTo(BeNil(), "%s comes from a ConfigMap", e.Name)
		cm := &corev1.ConfigMap{}
		objs.decode("ConfigMap", namespace, ref.Name, cm)
		Expect(cm.Data).To(HaveKey(ref.Key))
		env[e.Name] = cm.Data[ref.Key]
	}
	args := expand(c.Args, env)
	Expect(args).NotTo(ContainElement(ContainSubstring("$(")), "every reference expands")
	return args
}

// runUntilReady runs the controller with the arguments of its Deployment, as its
// ServiceAccount, and the syncer with args, which name its kubeconfigs, until the syncer's
// SyncTarget is Ready; it fails as soon as either is forbidden a request. Their endpoints
// move to free local ports.
func runUntilReady(ctx context.Context, controller *appsv1.Deployment, syncer []string) {
	GinkgoHelper()
	target, ok := flagValue(syncer, "sync-target-name")
	Expect(ok).To(BeTrue())
	c := start(ctx, "controller", append(onlyContainer(controller, "controller").Args,
		"--kubeconfig="+kubeconfigAs(bed.Hub, controllerSA)))
	s := start(ctx, "syncer", syncer)
	for _, p := range []*process{c, s} {
		for _, path := range []string{"/healthz", "/readyz"} {
			Eventually(p.get).WithContext(ctx).WithArguments(ctx, path).Should(Succeed(), "%s %s", p.name, path)
		}
	}

	lease := &coordinationv1.Lease{}
	Eventually(func(g Gomega) {
		g.Expect(c.running()).To(Succeed())
		g.Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: "custody-controller"}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).To(HaveValue(Not(BeEmpty())))
	}).WithContext(ctx).Should(Succeed(), "the controller leads")
	Eventually(func(g Gomega) {
		for _, p := range []*process{c, s} {
			g.Expect(p.running()).To(Succeed())
			if line := p.forbidden(); line != "" {
				StopTrying(p.name + " lacks a permission: " + line).Now()
			}
		}
		st := &workloadv1alpha1.SyncTarget{}
		g.Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: target}, st)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(st.Status.Conditions, workloadv1alpha1.ConditionReady)).To(BeTrue())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "SyncTarget %s turns Ready", target)
	// By now every informer of both has listed.
	for _, p := range []*process{c, s} {
		Expect(p.forbidden()).To(BeEmpty(), "%s lacks a permission", p.name)
	}
}
