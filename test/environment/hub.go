package environment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/cmd/kubectl-custody/app"
	"github.com/custody-dev/custody/config"
	"github.com/custody-dev/custody/controllers/syncer/credential"
	"github.com/custody-dev/custody/test/testbed"
)

// fieldOwner owns what the environment applies to the hub.
const fieldOwner = "custody-environment"

// installHub applies config/default to the hub, as an admin installs Custody there: the
// namespace, the controller's and the syncers' roles, and the admission policy that keeps
// each syncer's identity to its target. The CRDs the bed installed already, and the
// controller runs in this process rather than from its Deployment, which the hub, running
// no pods, would never start.
func (e *Environment) installHub(ctx context.Context) error {
	root, err := testbed.RepoRoot()
	if err != nil {
		return err
	}
	objs, err := testbed.Render(filepath.Join(root, "config", "default"))
	if err != nil {
		return err
	}
	objs = slices.DeleteFunc(objs, func(o *unstructured.Unstructured) bool {
		return slices.Contains([]string{"CustomResourceDefinition", "Deployment", "Service"}, o.GetKind())
	})
	return testbed.Apply(ctx, e.Hub.Client, fieldOwner, objs)
}

// join registers the member m of Location l with `kubectl custody join`, as an admin joins a
// member, and returns the hub config of the syncer's own identity, from the kubeconfig in
// the manifest that join wrote for the member.
func (e *Environment) join(ctx context.Context, l LocationOptions, m *testbed.Cluster) (*rest.Config, error) {
	path := filepath.Join(e.Dir, "join", m.Name+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	args := []string{"join", m.Name, "--storage-domain", l.Domain,
		"--location-label", LocationLabel + "=" + l.Name,
		"--fencing-cidrs", strings.Join(m.NodeCIDRs, ","), "--network-fence-class", l.Domain,
		"-o", path,
	}
	for _, s := range e.Hub.Servers() {
		args = append(args, "--hub-server", s)
	}
	if code, out, errOut := e.Custody(ctx, args...); code != 0 {
		return nil, fmt.Errorf("joining %s: %s", m.Name, strings.TrimSpace(out+errOut))
	}
	kubeconfig, err := hubKubeconfig(path)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s: %w", m.Name, err)
	}
	return clientcmd.RESTConfigFromKubeConfig(kubeconfig)
}

// SyncerHubConfig is how the named member's syncer reaches the hub: with the token that join
// requested for the identity it made for its target.
func (e *Environment) SyncerHubConfig(member string) *rest.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	return rest.CopyConfig(e.hubConfigs[member])
}

// Custody runs kubectl custody in-process as the hub's admin, and returns its exit code and
// what it wrote to stdout and to stderr.
func (e *Environment) Custody(ctx context.Context, args ...string) (code int, out, errOut string) {
	var o, eo bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &o, ErrOut: &eo}
	code = app.Run(ctx, append([]string{"--kubeconfig", e.Hub.LiveKubeconfig()}, args...), streams)
	return code, o.String(), eo.String()
}

// credential is the Renewer of the hub token of the named member's syncer, made on the
// syncer's first start after join, and kept across its restarts: a syncer run again starts
// from the newest token, as one in a pod starts from the Secret the Renewer keeps it in. That
// Secret is the member's HubKubeconfigSecret, in a namespace the bed makes as the member's
// manifest would. Called with e.mu held.
func (e *Environment) credential(name string, m *testbed.Cluster) (*credential.Renewer, error) {
	if r := e.credentials[name]; r != nil {
		return r, nil
	}
	if cfg := e.hubConfigs[name]; cfg.BearerToken == "" && cfg.BearerTokenFile == "" {
		return nil, nil // a credential that is not renewed, such as a client certificate
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: syncerNamespace}}
	if err := m.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("making namespace %s in %s: %w", syncerNamespace, name, err)
	}
	store := credential.SecretStore{Client: m.Client, Secret: SyncerHubKubeconfigSecret, Key: config.HubKubeconfigKey}
	r, err := credential.New(e.hubConfigs[name], credential.Options{Store: store})
	if err != nil {
		return nil, fmt.Errorf("the hub credential of %s: %w", name, err)
	}
	e.credentials[name] = r
	return r, nil
}

// syncerNamespace is the member namespace of the syncer, as config/member makes it.
const syncerNamespace = "custody-system"

// SyncerHubKubeconfigSecret is the member Secret where each member's syncer keeps its renewed
// hub kubeconfig.
var SyncerHubKubeconfigSecret = client.ObjectKey{Namespace: syncerNamespace, Name: config.HubKubeconfigSecret}

// SyncerCredential is the Renewer of the hub token of the named member's syncer, nil before
// the syncer first started: a spec reads its token, or renews it at once.
func (e *Environment) SyncerCredential(member string) *credential.Renewer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.credentials[member]
}

// Rejoin joins the named member again, as an admin does after its identity was revoked,
// takes it off eviction, and runs its syncer again with the new identity's token.
func (e *Environment) Rejoin(ctx context.Context, member string) error {
	m, err := e.lookUp(member)
	if err != nil {
		return err
	}
	var loc *LocationOptions
	for i, l := range e.opts.Locations {
		if slices.Contains(l.Members, member) {
			loc = &e.opts.Locations[i]
		}
	}
	if loc == nil {
		return e.noMember(member)
	}
	if err := e.StopSyncer(member); err != nil {
		return err
	}
	cfg, err := e.join(ctx, *loc, m)
	if err != nil {
		return err
	}
	t := &workloadv1alpha1.SyncTarget{}
	if err := e.Hub.Client.Get(ctx, client.ObjectKey{Name: member}, t); err != nil {
		return err
	}
	if err := e.Hub.Client.Patch(ctx, t, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"evict":false}}`))); err != nil {
		return err
	}
	return e.RestartSyncerWith(member, cfg)
}

// WipeHub loses the hub's state and installs Custody on it again, as an admin rebuilds a
// hub whose etcd was lost before restoring it: the API server comes back on the same address
// with the same certificates, the CRDs, config/default and the metrics reader's binding as
// at the first start, and nothing else. The controller and the syncers run on as they are;
// a spec stops the controller first, as the restore asks.
func (e *Environment) WipeHub(ctx context.Context) error {
	if err := e.Hub.Wipe(ctx); err != nil {
		return fmt.Errorf("wiping the hub: %w", err)
	}
	if err := e.installHub(ctx); err != nil {
		return err
	}
	return e.bindMetricsReader(ctx)
}

// UseMemberManifest gives the named member's syncer the hub credential of the member
// manifest at path (written by join or by hub import) and restarts it, as an admin applies
// the manifest to the member and restarts the syncer's Deployment.
func (e *Environment) UseMemberManifest(member, path string) error {
	kubeconfig, err := hubKubeconfig(path)
	if err != nil {
		return fmt.Errorf("reading the manifest of %s: %w", member, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return err
	}
	return e.RestartSyncerWith(member, cfg)
}

// RestartSyncerWith restarts the named member's syncer with the hub config cfg, and a
// Renewer of its token if it carries one to renew; a spec runs a syncer with a credential
// that outlives the hub's state, as a client certificate does.
func (e *Environment) RestartSyncerWith(member string, cfg *rest.Config) error {
	if err := e.StopSyncer(member); err != nil {
		return err
	}
	e.mu.Lock()
	e.hubConfigs[member] = cfg
	delete(e.credentials, member)
	e.mu.Unlock()
	return e.StartSyncer(member)
}

// hubKubeconfig is the syncer's hub kubeconfig in the member manifest at path.
func hubKubeconfig(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := testbed.Decode(data)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetName() == config.HubKubeconfigSecret {
			s := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, s); err != nil {
				return nil, err
			}
			return s.Data[config.HubKubeconfigKey], nil
		}
	}
	return nil, fmt.Errorf("no Secret %s", config.HubKubeconfigSecret)
}
