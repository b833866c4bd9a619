package config

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// memberFiles are config/member, the syncer it includes and the syncer's metrics reader
// role, as kustomize reads them.
//
//go:embed member syncer metrics
var memberFiles embed.FS

const (
	// HubKubeconfigSecret is the member Secret that holds the syncer's kubeconfig for the hub,
	// under the key HubKubeconfigKey: the Secret that config/syncer/syncer.yaml mounts.
	HubKubeconfigSecret = "custody-syncer-hub-kubeconfig"
	// HubKubeconfigKey is the key of the kubeconfig in HubKubeconfigSecret.
	HubKubeconfigKey = "kubeconfig"
	// namespace is where the syncer runs in its member.
	namespace = "custody-system"
	// syncerImage is the image that config/syncer/syncer.yaml names, which Member.SyncerImage
	// replaces.
	syncerImage = "custody-syncer"
	// overlay is the directory of the overlay that RenderMember writes beside config/member.
	overlay = "join"
)

// Member is one member cluster's syncer: what its manifest holds beyond config/member.
type Member struct {
	// SyncTarget names the member's SyncTarget on the hub.
	SyncTarget string
	// SyncerImage replaces the syncer's image; empty keeps the one config/syncer names.
	SyncerImage string
	// HubKubeconfig is the syncer's kubeconfig for the hub.
	HubKubeconfig []byte
	// HubServers are the URLs of every API server of a hub across sites, which the syncer
	// fails over between; empty: the kubeconfig's server alone.
	HubServers []string
}

// RenderMember renders config/member for m, as `kubectl apply -k` renders an overlay of it
// that names m's SyncTarget and image and generates HubKubeconfigSecret, and returns the
// objects as a multi-document YAML stream.
func RenderMember(m Member) ([]byte, error) {
	fsys := filesys.MakeFsInMemory()
	if err := copyFiles(memberFiles, fsys); err != nil {
		return nil, fmt.Errorf("reading config/member: %w", err)
	}
	k, err := yaml.Marshal(m.kustomization())
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"kustomization.yaml": k, HubKubeconfigKey: m.HubKubeconfig} {
		if err := fsys.WriteFile(path.Join("/", overlay, name), data); err != nil {
			return nil, err
		}
	}
	objs, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, "/"+overlay)
	if err != nil {
		return nil, fmt.Errorf("rendering config/member: %w", err)
	}
	return objs.AsYaml()
}

// kustomization is the overlay of config/member for m, as config/README.md describes it.
func (m Member) kustomization() *types.Kustomization {
	k := &types.Kustomization{
		Resources: []string{"../member"},
		ConfigMapGenerator: []types.ConfigMapArgs{{GeneratorArgs: types.GeneratorArgs{
			Namespace: namespace, Name: "custody-syncer", Behavior: "merge",
			KvPairSources: types.KvPairSources{LiteralSources: []string{
				"sync-target-name=" + m.SyncTarget, "hub-servers=" + strings.Join(m.HubServers, ","),
			}},
		}}},
		SecretGenerator: []types.SecretArgs{{GeneratorArgs: types.GeneratorArgs{
			Namespace: namespace, Name: HubKubeconfigSecret,
			KvPairSources: types.KvPairSources{FileSources: []string{HubKubeconfigKey}},
			// The Deployment mounts the Secret by its name; a new token replaces the old one.
			Options: &types.GeneratorOptions{DisableNameSuffixHash: true, Labels: map[string]string{"app.kubernetes.io/part-of": "custody"}},
		}}},
	}
	if m.SyncerImage != "" {
		name, tag, digest := splitImage(m.SyncerImage)
		k.Images = []types.Image{{Name: syncerImage, NewName: name, NewTag: tag, Digest: digest}}
	}
	return k
}

// splitImage splits an image reference into its name, tag and digest, either of them empty.
func splitImage(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	// A colon before the last slash is a registry's port.
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// copyFiles copies every file of src to the same path, from the root, in dst.
func copyFiles(src fs.FS, dst filesys.FileSystem) error {
	return fs.WalkDir(src, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(src, p)
		if err != nil {
			return err
		}
		return dst.WriteFile("/"+p, data)
	})
}

// SyncerHubRole is the ClusterRole of what a syncer does on the hub beyond the namespaces
// placed on its target (config/rbac), which join binds to each syncer's hub identity
// cluster-wide.
const SyncerHubRole = "custody-syncer-hub"
