package environment

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/cmd/kubectl-custody/app"
	"github.com/custody-dev/custody/config"
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
	if err := e.dropStaleToken(ctx, m.Name); err != nil {
		return nil, err
	}
	path := filepath.Join(e.Dir, "join", m.Name+".yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if code, out, errOut := e.Custody(ctx, "join", m.Name, "--storage-domain", l.Domain,
		"--location-label", LocationLabel+"="+l.Name,
		"--fencing-cidrs", strings.Join(m.NodeCIDRs, ","), "--network-fence-class", l.Domain,
		"-o", path,
	); code != 0 {
		return nil, fmt.Errorf("joining %s: %s", m.Name, strings.TrimSpace(out+errOut))
	}
	kubeconfig, err := hubKubeconfig(path)
	if err != nil {
		return nil, fmt.Errorf("reading the manifest of %s: %w", m.Name, err)
	}
	return clientcmd.RESTConfigFromKubeConfig(kubeconfig)
}

// SyncerHubConfig is how the named member's syncer reaches the hub: with the token of the
// identity that join made for its target.
func (e *Environment) SyncerHubConfig(member string) *rest.Config {
	return rest.CopyConfig(e.hubConfigs[member])
}

// Custody runs kubectl custody in-process as the hub's admin, and returns its exit code and
// what it wrote to stdout and to stderr.
func (e *Environment) Custody(ctx context.Context, args ...string) (code int, out, errOut string) {
	var o, eo bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &o, ErrOut: &eo}
	code = app.Run(ctx, append([]string{"--kubeconfig", e.Hub.Kubeconfig}, args...), streams)
	return code, o.String(), eo.String()
}

// dropStaleToken deletes the token Secret of the member's syncer, kept from an earlier run,
// when the CA it names is not the hub's: the bed makes its certificates anew on each start,
// and the hub's token controller may not have brought the Secret in line yet when join reads
// it. join then makes a new token.
func (e *Environment) dropStaleToken(ctx context.Context, member string) error {
	s := &corev1.Secret{}
	if err := e.Hub.Client.Get(ctx, app.TokenSecret(member), s); err != nil {
		return client.IgnoreNotFound(err)
	}
	if bytes.Equal(s.Data[corev1.ServiceAccountRootCAKey], e.Hub.Config.CAData) {
		return nil
	}
	return client.IgnoreNotFound(e.Hub.Client.Delete(ctx, s))
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
