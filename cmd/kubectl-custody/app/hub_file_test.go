package app

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// object is an object of the kind, as a hub serves it.
func object(apiVersion, kind, namespace, name, uid string) *unstructured.Unstructured {
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{
			"name": name, "uid": uid, "resourceVersion": "42", "generation": int64(3),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"managedFields":     []any{map[string]any{"manager": "kubectl"}},
		},
		"status": map[string]any{"phase": "Bound"},
	}}
	if namespace != "" {
		o.SetNamespace(namespace)
	}
	return o
}

func TestHubExportRoundTrips(t *testing.T) {
	claim := object("v1", "PersistentVolumeClaim", "shop", "data", "u1")
	claim.SetFinalizers([]string{"workload.custody.dev/syncer-m1"})
	stripForExport(claim)
	data, err := newHubExport("hub-1", metav1.Now(), []*unstructured.Unstructured{claim}).marshal()
	if err != nil {
		t.Fatal(err)
	}
	e, err := parseHubExport(data)
	if err != nil {
		t.Fatal(err)
	}
	got := e.objects()
	if e.HubIdentity != "hub-1" || len(got) != 1 {
		t.Fatalf("read back identity %q and %d objects", e.HubIdentity, len(got))
	}
	o := got[0]
	if o.GetResourceVersion() != "" || o.GetGeneration() != 0 || o.GetManagedFields() != nil || o.GetCreationTimestamp() != (metav1.Time{}) {
		t.Errorf("the export keeps what the hub makes anew: %v", o.Object["metadata"])
	}
	if o.GetUID() != "u1" || len(o.GetFinalizers()) != 1 || o.Object["status"] == nil {
		t.Errorf("the export lost the uid, finalizers or status: %v", o.Object)
	}
	created := stripForCreate(o, true)
	if created.GetUID() != "" || created.Object["status"] != nil || created.GetFinalizers() == nil {
		t.Errorf("an object to create keeps its old uid or status, or lost its finalizers: %v", created.Object)
	}
	if whole := stripForCreate(o, false); whole.Object["status"] == nil {
		t.Errorf("an object whose resource has no status subresource lost its status: %v", whole.Object)
	}
}

func TestParseHubExportRefusesWithWhy(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"not YAML", "{{{", "not a Custody hub export"},
		{"another file", "apiVersion: v1\nkind: List\n", `its format is "", not "custody.dev/hub-export"`},
		{"a later version", "format: custody.dev/hub-export\nversion: 2\n", "format version 2: this kubectl custody reads version 1 only"},
		{"no identity", "format: custody.dev/hub-export\nversion: 1\n", "names no hub identity"},
		{"an unknown field", "format: custody.dev/hub-export\nversion: 1\nhubIdentity: h\nextra: 1\n", "not a valid Custody hub export"},
		{"an object without a uid", "format: custody.dev/hub-export\nversion: 1\nhubIdentity: h\nobjects:\n- {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n", "object 1 has no apiVersion, kind, name or uid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseHubExport([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parseHubExport() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestNotEmptyNamesWhatItFound(t *testing.T) {
	if err := notEmpty(nil); err != nil {
		t.Errorf("an empty hub refused: %v", err)
	}
	found := []string{"synctarget.workload.custody.dev/m1", "synctarget.workload.custody.dev/m2", "namespace/shop",
		"persistentvolume/pvc-1", "persistentvolume/pvc-2", "persistentvolume/pvc-3", "persistentvolume/pvc-4"}
	err := notEmpty(found)
	want := "the hub is not empty of Custody objects: it holds synctarget.workload.custody.dev/m1, synctarget.workload.custody.dev/m2, namespace/shop, persistentvolume/pvc-1, persistentvolume/pvc-2 and 2 more; "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "--merge") {
		t.Errorf("notEmpty() = %v, want it to start with %q and name --merge", err, want)
	}
}

func TestHubMadeAndPlaced(t *testing.T) {
	rootCA := object("v1", "ConfigMap", "shop", rootCAConfigMap, "u1")
	token := object("v1", "Secret", "shop", "t", "u2")
	token.Object["type"] = "kubernetes.io/service-account-token"
	users := object("v1", "Secret", "shop", "db", "u3")
	for _, o := range []*unstructured.Unstructured{rootCA, token} {
		if !hubMade(o) {
			t.Errorf("%s is the hub's own", describe(o))
		}
	}
	if hubMade(users) {
		t.Errorf("%s is the user's", describe(users))
	}
	ns := object("v1", "Namespace", "", "shop", "u4")
	if isPlaced(ns) {
		t.Error("a namespace with no state label or Placement is placed")
	}
	ns.SetLabels(map[string]string{"state.workload.custody.dev/m1": "Sync"})
	if !isPlaced(ns) {
		t.Error("a namespace placed on m1 is not placed")
	}
}
