package config

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestSplitImage(t *testing.T) {
	for _, tc := range []struct{ ref, name, tag, digest string }{
		{"custody-syncer", "custody-syncer", "", ""},
		{"custody-syncer:v1", "custody-syncer", "v1", ""},
		{"registry.example.com:5000/custody/syncer", "registry.example.com:5000/custody/syncer", "", ""},
		{"registry.example.com:5000/custody/syncer:v1", "registry.example.com:5000/custody/syncer", "v1", ""},
		{"registry.example.com/syncer@sha256:abc", "registry.example.com/syncer", "", "sha256:abc"},
		{"registry.example.com/syncer:v1@sha256:abc", "registry.example.com/syncer", "v1", "sha256:abc"},
	} {
		name, tag, digest := splitImage(tc.ref)
		if name != tc.name || tag != tc.tag || digest != tc.digest {
			t.Errorf("splitImage(%q) = %q %q %q, want %q %q %q", tc.ref, name, tag, digest, tc.name, tc.tag, tc.digest)
		}
	}
}

// syncerImageOf is the image of the syncer's container in a rendered member.
func syncerImageOf(t *testing.T, manifest []byte) string {
	t.Helper()
	for doc := range strings.SplitSeq(string(manifest), "\n---\n") {
		var d struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct{ Name, Image string }
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind == "Deployment" && len(d.Spec.Template.Spec.Containers) == 1 {
			return d.Spec.Template.Spec.Containers[0].Image
		}
	}
	t.Fatal("no Deployment with one container")
	return ""
}

func TestRenderMemberSetsTheSyncerImage(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{"", "custody-syncer:latest"},
		{"registry.example.com:5000/custody-syncer:v1", "registry.example.com:5000/custody-syncer:v1"},
		{"registry.example.com/syncer@sha256:abc", "registry.example.com/syncer@sha256:abc"},
	} {
		manifest, err := RenderMember(Member{SyncTarget: "m1", SyncerImage: tc.image})
		if err != nil {
			t.Fatal(err)
		}
		if got := syncerImageOf(t, manifest); got != tc.want {
			t.Errorf("--syncer-image %q: the syncer runs %q, want %q", tc.image, got, tc.want)
		}
	}
}

func TestRenderMemberHoldsTheTargetAndTheKubeconfig(t *testing.T) {
	kubeconfig := []byte("apiVersion: v1\nkind: Config\n")
	manifest, err := RenderMember(Member{SyncTarget: "eu-1a", HubKubeconfig: kubeconfig,
		HubServers: []string{"https://hub-a:6443", "https://hub-b:6443"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{
		[]byte("\n  sync-target-name: eu-1a\n"),
		[]byte("\n  hub-servers: https://hub-a:6443,https://hub-b:6443\n"),
		[]byte("\n        - --hub-servers=$(HUB_SERVERS)\n"),
		[]byte("\n  name: " + HubKubeconfigSecret + "\n"),
		[]byte("\n  " + HubKubeconfigKey + ": YXBpVmVyc2lvbjogdjEKa2luZDogQ29uZmlnCg==\n"),
	} {
		if !bytes.Contains(manifest, want) {
			t.Errorf("the manifest lacks %q:\n%s", want, manifest)
		}
	}
}

func TestRenderMemberLetsTheSyncerKeepOnlyItsHubKubeconfig(t *testing.T) {
	manifest, err := RenderMember(Member{SyncTarget: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	var role, binding bool
	for doc := range strings.SplitSeq(string(manifest), "\n---\n") {
		var d struct {
			Kind     string
			Metadata struct{ Name, Namespace string }
			Rules    []struct{ APIGroups, Resources, ResourceNames, Verbs []string }
			RoleRef  struct{ Kind, Name string }
			Subjects []struct{ Kind, Name, Namespace string }
		}
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatal(err)
		}
		switch {
		case d.Kind == "Role" && d.Metadata.Name == "custody-syncer-hub-kubeconfig":
			role = d.Metadata.Namespace == namespace && len(d.Rules) == 1 &&
				strings.Join(d.Rules[0].Resources, ",") == "secrets" && strings.Join(d.Rules[0].ResourceNames, ",") == HubKubeconfigSecret &&
				strings.Join(d.Rules[0].Verbs, ",") == "get,update"
			if !role {
				t.Errorf("the Role: %+v", d)
			}
		case d.Kind == "RoleBinding" && d.Metadata.Name == "custody-syncer-hub-kubeconfig":
			binding = d.RoleRef.Kind == "Role" && d.RoleRef.Name == "custody-syncer-hub-kubeconfig" && len(d.Subjects) == 1 &&
				d.Subjects[0].Name == "custody-syncer" && d.Subjects[0].Namespace == namespace
			if !binding {
				t.Errorf("the RoleBinding: %+v", d)
			}
		}
	}
	if !role || !binding {
		t.Errorf("the manifest lacks the syncer's hub kubeconfig Role (%t) or RoleBinding (%t)", role, binding)
	}
	if !strings.Contains(string(manifest), "--hub-kubeconfig-secret=custody-system/"+HubKubeconfigSecret) {
		t.Error("the syncer is not told where to keep its renewed hub token")
	}
}
