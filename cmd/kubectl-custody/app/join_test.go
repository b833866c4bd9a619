package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/config"
)

const (
	hubServer = "https://hub.example:6443"
	hubToken  = "the-token"
	hubCA     = "the-ca"
)

// runJoin joins f.target through c, as the plugin does once connected, and returns what it
// printed on stdout and stderr.
func runJoin(c client.Client, f joinFlags) (string, string, error) {
	var out, errOut bytes.Buffer
	o := &options{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	err := o.joinHub(context.Background(), c, &f)
	return out.String(), errOut.String(), err
}

// joinOf is join m1 in storage domain east, written to a file of the test.
func joinOf(t *testing.T) joinFlags {
	return joinFlags{
		target: "m1", domains: []string{"east"}, hubServers: []string{hubServer}, credentialTTL: time.Hour, hubCA: []byte(hubCA),
		output: filepath.Join(t.TempDir(), "member.yaml"),
	}
}

// tokenExpiry is when the tokens of tokenAPI expire.
var tokenExpiry = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// tokenAPI answers every TokenRequest with hubToken, and counts in requested the lifetime
// asked of each.
func tokenAPI(requested *[]int64) interceptor.Funcs {
	return interceptor.Funcs{SubResourceCreate: func(ctx context.Context, c client.Client, subResource string, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
		tr, ok := sub.(*authenticationv1.TokenRequest)
		if subResource != "token" || !ok {
			return c.SubResource(subResource).Create(ctx, obj, sub, opts...)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if requested != nil {
			*requested = append(*requested, *tr.Spec.ExpirationSeconds)
		}
		tr.Status = authenticationv1.TokenRequestStatus{Token: hubToken, ExpirationTimestamp: metav1.NewTime(tokenExpiry)}
		return nil
	}}
}

// dryRun tells whether opts ask for a dry run.
func dryRun(opts []client.CreateOption) bool {
	o := &client.CreateOptions{}
	o.ApplyOptions(opts)
	return slices.Contains(o.DryRun, metav1.DryRunAll)
}

// newHub is a fake hub holding objs, with the hooks of funcs.
func newHub(funcs interceptor.Funcs, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&workloadv1alpha1.SyncTarget{}).
		WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

// hubHolds names the objects of the kinds join writes that the hub holds, as kindName
// does.
func hubHolds(t *testing.T, c client.Client) []string {
	t.Helper()
	var names []string
	for _, list := range []client.ObjectList{
		&corev1.ServiceAccountList{}, &rbacv1.ClusterRoleBindingList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}, &corev1.SecretList{}, &workloadv1alpha1.SyncTargetList{},
	} {
		if err := c.List(context.Background(), list); err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range items {
			names = append(names, kindName(o.(client.Object)))
		}
	}
	return names
}

// joinedObjects are the hub objects of a joined m1.
var joinedObjects = []string{
	"serviceaccount/custody-syncer-target-m1",
	"clusterrolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1",
	"role.rbac.authorization.k8s.io/custody-syncer-target-m1-token",
	"rolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1-token",
	"synctarget.workload.custody.dev/m1",
}

// tokenRequested is join's report of the token it requested of tokenAPI.
const tokenRequested = "serviceaccount/custody-syncer-target-m1 token requested, expires 2030-01-02T03:04:05Z\n"

// said is the report of join for the hub objects of m1, each with what happened to it, and,
// before the SyncTarget, the token it requested unless in a dry run.
func said(results ...string) string {
	var b strings.Builder
	for i, r := range results {
		if i == 4 && !strings.Contains(r, "dry run") {
			b.WriteString(tokenRequested)
		}
		b.WriteString(joinedObjects[i] + " " + r + "\n")
	}
	return b.String()
}

// decodeManifest decodes the objects of a multi-document YAML manifest.
func decodeManifest(t *testing.T, data []byte) map[string]*unstructured.Unstructured {
	t.Helper()
	objs := map[string]*unstructured.Unstructured{}
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		err := d.Decode(&o.Object)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decoding the manifest: %v", err)
		}
		objs[o.GetKind()+" "+o.GetName()] = o
	}
}

// decodeInto decodes o into a typed object, failing on any field the type does not know.
func decodeInto(t *testing.T, o *unstructured.Unstructured, into runtime.Object) {
	t.Helper()
	if o == nil {
		t.Fatalf("the manifest holds no %T", into)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		t.Fatalf("decoding %s %s: %v", o.GetKind(), o.GetName(), err)
	}
}

func TestJoinCreatesTheIdentityThenTheSyncTarget(t *testing.T) {
	c := newHub(tokenAPI(nil))
	f := joinOf(t)
	f.locationLabels = []string{"region=eu", "zone=a"}
	f.fencingCIDRs, f.fenceClass = []string{"10.0.0.0/24"}, "fast"
	out, errOut, err := runJoin(c, f)
	if err != nil {
		t.Fatal(err)
	}
	want := said("created", "created", "created", "created", "created") + "wrote " + f.output + ": apply it to the member cluster with kubectl apply -f " + f.output + "\n"
	if out != want || errOut != "" {
		t.Errorf("printed\n%s\nstderr %q; want\n%s", out, errOut, want)
	}

	ctx := context.Background()
	st := &workloadv1alpha1.SyncTarget{}
	if err := c.Get(ctx, client.ObjectKey{Name: "m1"}, st); err != nil {
		t.Fatal(err)
	}
	wantSpec := workloadv1alpha1.SyncTargetSpec{
		StorageDomains: []string{"east"},
		Fencing:        &workloadv1alpha1.FencingSpec{NodeCIDRs: []string{"10.0.0.0/24"}, NetworkFenceClassName: "fast"},
	}
	if !equality.Semantic.DeepEqual(st.Spec, wantSpec) || st.Labels["region"] != "eu" || st.Labels["zone"] != "a" {
		t.Errorf("synctarget m1: labels %v, spec %+v", st.Labels, st.Spec)
	}
	key := client.ObjectKey{Namespace: "custody-system", Name: "custody-syncer-target-m1"}
	if err := c.Get(ctx, key, &corev1.ServiceAccount{}); err != nil {
		t.Errorf("the identity: %v", err)
	}
	b := &rbacv1.ClusterRoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Name: key.Name}, b); err != nil {
		t.Fatal(err)
	}
	wantSubjects := []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: key.Namespace, Name: key.Name}}
	if b.RoleRef.Name != "custody-syncer-hub" || b.RoleRef.Kind != "ClusterRole" || !slices.Equal(b.Subjects, wantSubjects) {
		t.Errorf("binding: role %+v, subjects %+v", b.RoleRef, b.Subjects)
	}
	r := &rbacv1.Role{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-token"}, r); err != nil {
		t.Fatal(err)
	}
	wantRules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"}, ResourceNames: []string{key.Name}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{"custody-hub-identity"}},
	}
	if !equality.Semantic.DeepEqual(r.Rules, wantRules) {
		t.Errorf("the token role: %+v", r.Rules)
	}
	rb := &rbacv1.RoleBinding{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: key.Namespace, Name: key.Name + "-token"}, rb); err != nil {
		t.Fatal(err)
	}
	if rb.RoleRef.Name != r.Name || rb.RoleRef.Kind != "Role" || !slices.Equal(rb.Subjects, wantSubjects) {
		t.Errorf("token binding: role %+v, subjects %+v", rb.RoleRef, rb.Subjects)
	}
}

func TestJoinRequestsAnExpiringToken(t *testing.T) {
	var requested []int64
	// A Secret of a token that never expires, made by an earlier version of join.
	legacy := legacyToken("m1")
	legacy.Type = corev1.SecretTypeServiceAccountToken
	c := newHub(tokenAPI(&requested), legacy)
	f := joinOf(t)
	f.credentialTTL = 20 * time.Minute
	out, _, err := runJoin(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(requested, []int64{1200}) {
		t.Errorf("requested tokens of %v seconds, want one of 1200", requested)
	}
	if !strings.Contains(out, tokenRequested+"secret/custody-syncer-target-m1-token deleted: it held a token that never expires, now revoked\n") {
		t.Errorf("printed\n%s", out)
	}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(legacy), &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("the legacy token Secret: %v", err)
	}
}

func TestJoinNeverPrintsATokenToATerminal(t *testing.T) {
	defer func(was func(io.Writer) bool) { isTerminal = was }(isTerminal)
	isTerminal = func(io.Writer) bool { return true }
	c := newHub(tokenAPI(nil))
	f := joinOf(t)
	f.output = "-"
	out, _, err := runJoin(c, f)
	if err == nil || !strings.Contains(err.Error(), "stdout is a terminal: write it to a file with -o FILE, or pipe it") || out != "" {
		t.Errorf("error %v, printed %q", err, out)
	}
	if held := hubHolds(t, c); len(held) > 0 {
		t.Errorf("the hub holds %v", held)
	}
	// A dry run's manifest carries no token.
	f.dryRun = true
	if out, _, err := runJoin(c, f); err != nil || !strings.Contains(out, "custody-syncer") {
		t.Errorf("dry run: error %v, printed %q", err, out)
	}
	// A file is fine.
	f = joinOf(t)
	if _, _, err := runJoin(c, f); err != nil {
		t.Error(err)
	}
}

func TestJoinWritesTheMembersManifest(t *testing.T) {
	f := joinOf(t)
	f.syncerImage = "registry.example.com:5000/custody-syncer:v1"
	if _, _, err := runJoin(newHub(tokenAPI(nil)), f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.output)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(f.output); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the manifest holds a token: mode %v, %v; want 0600", info.Mode(), err)
	}
	objs := decodeManifest(t, data)
	var names []string
	for name := range objs {
		names = append(names, name)
	}
	slices.Sort(names)
	cm := ""
	for _, n := range names {
		if strings.HasPrefix(n, "ConfigMap custody-syncer-") {
			cm = strings.TrimPrefix(n, "ConfigMap ")
		}
	}
	want := []string{
		"ClusterRole custody-metrics-reader", "ClusterRole custody-syncer-member", "ClusterRoleBinding custody-syncer-member", "ConfigMap " + cm,
		"Deployment custody-syncer", "Namespace custody-system",
		"Role custody-syncer-hub-kubeconfig", "RoleBinding custody-syncer-hub-kubeconfig", "Secret custody-syncer-hub-kubeconfig", "ServiceAccount custody-syncer",
	}
	if !slices.Equal(names, want) {
		t.Fatalf("the manifest holds %v, want %v", names, want)
	}

	configMap := &corev1.ConfigMap{}
	decodeInto(t, objs["ConfigMap "+cm], configMap)
	if configMap.Data["sync-target-name"] != "m1" || configMap.Data["hub-servers"] != "" {
		t.Errorf("ConfigMap %s: %v, want the target and no other hub server", cm, configMap.Data)
	}
	d := &appsv1.Deployment{}
	decodeInto(t, objs["Deployment custody-syncer"], d)
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != f.syncerImage || c.Env[0].ValueFrom.ConfigMapKeyRef.Name != cm {
		t.Errorf("the syncer: image %s, environment %+v", c.Image, c.Env)
	}

	secret := &corev1.Secret{}
	decodeInto(t, objs["Secret "+config.HubKubeconfigSecret], secret)
	kubeconfig, err := clientcmd.Load(secret.Data[config.HubKubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kubeconfig, nil).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != hubServer || cfg.BearerToken != hubToken || string(cfg.CAData) != hubCA {
		t.Errorf("the hub kubeconfig: server %s, token %q, CA %q", cfg.Host, cfg.BearerToken, cfg.CAData)
	}
}

func TestJoinNamesEveryServerOfAHubAcrossSites(t *testing.T) {
	f := joinOf(t)
	f.hubServers = []string{hubServer, "https://hub-b.example:6443"}
	if _, _, err := runJoin(newHub(tokenAPI(nil)), f); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.output)
	if err != nil {
		t.Fatal(err)
	}
	for name, obj := range decodeManifest(t, data) {
		if !strings.HasPrefix(name, "ConfigMap custody-syncer-") {
			continue
		}
		configMap := &corev1.ConfigMap{}
		decodeInto(t, obj, configMap)
		if got, want := configMap.Data["hub-servers"], hubServer+",https://hub-b.example:6443"; got != want {
			t.Errorf("the syncer is given the hub servers %q, want %q", got, want)
		}
		return
	}
	t.Fatal("the manifest has no ConfigMap of the syncer")
}

func TestJoinIsIdempotent(t *testing.T) {
	// The SyncTarget exists, with a label of its own and another domain.
	existing := &workloadv1alpha1.SyncTarget{
		ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{"team": "a"}},
		Spec:       workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"west"}, Priority: 3},
	}
	c := newHub(tokenAPI(nil), existing)
	f := joinOf(t)
	f.locationLabels = []string{"region=eu"}
	first, _, err := runJoin(c, f)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(f.output)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, said("created", "created", "created", "created", "configured")) {
		t.Errorf("first run printed\n%s", first)
	}
	second, _, err := runJoin(c, f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(second, said("unchanged", "unchanged", "unchanged", "unchanged", "unchanged")) {
		t.Errorf("second run printed\n%s", second)
	}
	again, err := os.ReadFile(f.output)
	if err != nil || !bytes.Equal(again, manifest) {
		t.Errorf("the second manifest differs from the first (%v)", err)
	}
	st := &workloadv1alpha1.SyncTarget{}
	if err := c.Get(context.Background(), client.ObjectKey{Name: "m1"}, st); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Spec.StorageDomains, []string{"east"}) || st.Spec.Priority != 3 || st.Labels["team"] != "a" || st.Labels["region"] != "eu" {
		t.Errorf("synctarget m1: labels %v, spec %+v", st.Labels, st.Spec)
	}
}

func TestJoinDryRunCreatesNothing(t *testing.T) {
	c := newHub(tokenAPI(nil))
	f := joinOf(t)
	f.dryRun = true
	out, errOut, err := runJoin(c, f)
	if err != nil {
		t.Fatal(err)
	}
	wantReport := said("created (server dry run)", "created (server dry run)", "created (server dry run)", "created (server dry run)", "created (server dry run)")
	if errOut != wantReport {
		t.Errorf("reported\n%s\nwant\n%s", errOut, wantReport)
	}
	if held := hubHolds(t, c); len(held) > 0 {
		t.Errorf("the hub holds %v", held)
	}
	if _, err := os.Stat(f.output); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run wrote %s: %v", f.output, err)
	}
	secret := &corev1.Secret{}
	decodeInto(t, decodeManifest(t, []byte(out))["Secret "+config.HubKubeconfigSecret], secret)
	kubeconfig, err := clientcmd.Load(secret.Data[config.HubKubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if got := kubeconfig.AuthInfos["custody-syncer-target-m1"]; got == nil || got.Token != "<a token of serviceaccount custody-system/custody-syncer-target-m1, valid for 1h0m0s>" {
		t.Errorf("the dry run's kubeconfig: %+v", kubeconfig.AuthInfos)
	}
}

func TestJoinPrintsTheManifestOnStdout(t *testing.T) {
	f := joinOf(t)
	f.output = "-"
	out, errOut, err := runJoin(newHub(tokenAPI(nil)), f)
	if err != nil {
		t.Fatal(err)
	}
	if errOut != said("created", "created", "created", "created", "created") {
		t.Errorf("reported\n%s", errOut)
	}
	if _, ok := decodeManifest(t, []byte(out))["Deployment custody-syncer"]; !ok {
		t.Errorf("stdout holds no syncer:\n%s", out)
	}
}

// refuse makes the hub refuse to create objects like obj, with err; a dry run too when
// dryRunToo.
func refuse(obj client.Object, err error, dryRunToo bool) interceptor.Funcs {
	funcs := tokenAPI(nil)
	create := func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
		return c.Create(ctx, o, opts...)
	}
	funcs.Create = func(ctx context.Context, c client.WithWatch, o client.Object, opts ...client.CreateOption) error {
		if reflect.TypeOf(o) == reflect.TypeOf(obj) && (dryRunToo || !dryRun(opts)) {
			return err
		}
		return create(ctx, c, o, opts...)
	}
	return funcs
}

func TestJoinLeavesNothingOnFailure(t *testing.T) {
	forbidden := func(resource string) error {
		return apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "custody-syncer-target-m1", errors.New(`User "bob" cannot create it`))
	}
	invalid := apierrors.NewInvalid(workloadv1alpha1.GroupVersion.WithKind("SyncTarget").GroupKind(), "m1",
		field.ErrorList{field.Invalid(field.NewPath("spec", "fencing", "nodeCIDRs"), "array", "every entry must be a CIDR such as 10.0.0.0/24")})
	previous := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: "custody-system", Name: "custody-syncer-target-m1", Labels: map[string]string{"app.kubernetes.io/part-of": "custody"},
	}}
	for _, tc := range []struct {
		name    string
		funcs   interceptor.Funcs
		objs    []client.Object
		err     string
		report  string
		remains []string
	}{
		{
			name:  "the hub refuses the SyncTarget",
			funcs: refuse(&workloadv1alpha1.SyncTarget{}, invalid, true),
			err:   `the hub refuses synctarget m1: SyncTarget.workload.custody.dev "m1" is invalid: spec.fencing.nodeCIDRs: Invalid value: "array": every entry must be a CIDR such as 10.0.0.0/24`,
		},
		{
			name:  "no right to create the identity",
			funcs: refuse(&corev1.ServiceAccount{}, forbidden("serviceaccounts"), false),
			err:   `writing serviceaccount/custody-syncer-target-m1: serviceaccounts "custody-syncer-target-m1" is forbidden: User "bob" cannot create it`,
		},
		{
			name:   "no right to bind the identity",
			funcs:  refuse(&rbacv1.ClusterRoleBinding{}, forbidden("clusterrolebindings.rbac.authorization.k8s.io"), false),
			err:    `writing clusterrolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1: clusterrolebindings.rbac.authorization.k8s.io "custody-syncer-target-m1" is forbidden: User "bob" cannot create it`,
			report: "serviceaccount/custody-syncer-target-m1 created\nserviceaccount/custody-syncer-target-m1 deleted: rolled back\n",
		},
		{
			name:  "no right to request a token",
			funcs: interceptor.Funcs{SubResourceCreate: refuseToken},
			err:   `requesting a token of serviceaccount/custody-syncer-target-m1: serviceaccounts "custody-syncer-target-m1" is forbidden: User "bob" cannot create it`,
			report: said("created", "created", "created", "created") +
				"rolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted: rolled back\n" +
				"role.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted: rolled back\n" +
				"clusterrolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1 deleted: rolled back\n" +
				"serviceaccount/custody-syncer-target-m1 deleted: rolled back\n",
		},
		{
			name:  "no right to request a token, the identity made by an earlier run",
			funcs: interceptor.Funcs{SubResourceCreate: refuseToken},
			objs:  []client.Object{previous},
			err:   `requesting a token of serviceaccount/custody-syncer-target-m1: serviceaccounts "custody-syncer-target-m1" is forbidden: User "bob" cannot create it`,
			report: said("unchanged", "created", "created", "created") +
				"rolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted: rolled back\n" +
				"role.rbac.authorization.k8s.io/custody-syncer-target-m1-token deleted: rolled back\n" +
				"clusterrolebinding.rbac.authorization.k8s.io/custody-syncer-target-m1 deleted: rolled back\n",
			remains: []string{"serviceaccount/custody-syncer-target-m1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newHub(tc.funcs, tc.objs...)
			f := joinOf(t)
			out, _, err := runJoin(c, f)
			if got := errorText(err); got != tc.err {
				t.Errorf("error %q, want %q", got, tc.err)
			}
			if out != tc.report {
				t.Errorf("printed\n%s\nwant\n%s", out, tc.report)
			}
			if held := hubHolds(t, c); !slices.Equal(held, tc.remains) {
				t.Errorf("the hub holds %v, want %v", held, tc.remains)
			}
			if entries, _ := os.ReadDir(filepath.Dir(f.output)); len(entries) > 0 {
				t.Errorf("left %v beside the manifest", entries)
			}
		})
	}
}

// refuseToken refuses every TokenRequest, as the hub does a user who may not create tokens.
func refuseToken(ctx context.Context, c client.Client, subResource string, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, obj.GetName(), errors.New(`User "bob" cannot create it`))
}

func TestJoinRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no domain", []string{"m1"}, `required flag(s) "storage-domain" not set`},
		{"a target name that is not a DNS label", []string{"M_1", "--storage-domain=east"},
			`target name "M_1" is not a DNS label: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"a dotted target name", []string{"m1.eu", "--storage-domain=east"}, `target name "m1.eu" is not a DNS label: `},
		{"a target name longer than a key", []string{strings.Repeat("m", 57), "--storage-domain=east"}, `target name "` + strings.Repeat("m", 57) + `" is too long: its key would be "m`},
		{"a domain that is not a DNS label", []string{"m1", "--storage-domain=East"}, `--storage-domain "East" is not a DNS label: `},
		{"a label that is not KEY=VALUE", []string{"m1", "--storage-domain=east", "--location-label=region"}, `--location-label "region" is not KEY=VALUE`},
		{"CIDRs without a class", []string{"m1", "--storage-domain=east", "--fencing-cidrs=10.0.0.0/24"}, `--fencing-cidrs and --network-fence-class go together: a NetworkFence needs both`},
		{"a class without CIDRs", []string{"m1", "--storage-domain=east", "--network-fence-class=fast"}, `--fencing-cidrs and --network-fence-class go together: a NetworkFence needs both`},
		{"a token shorter than the API server gives", []string{"m1", "--storage-domain=east", "--credential-ttl=5m"}, `--credential-ttl 5m0s is shorter than 10m0s, the shortest token the API server gives`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(context.Background(), append([]string{"join"}, tc.args...), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
			if code != 1 || out.Len() > 0 || !strings.HasPrefix(errOut.String(), "error: "+tc.want) || strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want one line starting with %q", code, out.String(), errOut.String(), "error: "+tc.want)
			}
		})
	}
}

func TestJoinUnreachableHub(t *testing.T) {
	// A local port that nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "hub.kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: hub, cluster: {server: "`+server+`"}}]
users: [{name: admin, user: {token: t}}]
contexts: [{name: hub, context: {cluster: hub, user: admin}}]
current-context: hub
`), 0o600); err != nil {
		t.Fatal(err)
	}
	output := filepath.Join(t.TempDir(), "member.yaml")
	var out, errOut bytes.Buffer
	code := Run(context.Background(), []string{"join", "m1", "--storage-domain=east", "--kubeconfig=" + kubeconfig, "-o", output},
		genericiooptions.IOStreams{Out: &out, ErrOut: &errOut})
	want := "error: cannot reach the hub at " + server + ": dial tcp " + strings.TrimPrefix(server, "https://") + ": connect: connection refused\n"
	if code != 1 || out.Len() > 0 || errOut.String() != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want %q", code, out.String(), errOut.String(), want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(output)); len(entries) > 0 {
		t.Errorf("left %v", entries)
	}
}
