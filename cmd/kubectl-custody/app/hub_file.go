package app

import (
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// The export file says what it is, and in which version of its format, first: import refuses
// any other file, and any other version, before it reads an object.
const (
	exportFormat  = "custody.dev/hub-export"
	exportVersion = 1
)

// hubExport is the file kubectl custody hub export writes: the identity of the hub it was
// exported from and its objects, each as the hub served it less what the hub makes anew
// (stripForExport). Each object keeps its uid, which import maps to the uid its copy gets,
// for the references to it.
type hubExport struct {
	Format      string           `json:"format"`
	Version     int              `json:"version"`
	HubIdentity string           `json:"hubIdentity"`
	ExportedAt  metav1.Time      `json:"exportedAt"`
	Objects     []map[string]any `json:"objects"`
}

// newHubExport is the export of the hub with identity id, holding objs.
func newHubExport(id string, at metav1.Time, objs []*unstructured.Unstructured) *hubExport {
	e := &hubExport{Format: exportFormat, Version: exportVersion, HubIdentity: id, ExportedAt: at}
	for _, o := range objs {
		e.Objects = append(e.Objects, o.Object)
	}
	return e
}

// marshal is the file's content.
func (e *hubExport) marshal() ([]byte, error) { return yaml.Marshal(e) }

// parseHubExport reads an export file, refusing, with why, one that does not parse, is not an
// export, is of another version of the format, or holds an object without a kind or name.
func parseHubExport(data []byte) (*hubExport, error) {
	var head struct {
		Format  string `json:"format"`
		Version int    `json:"version"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a Custody hub export: %w", err)
	}
	if head.Format != exportFormat {
		return nil, fmt.Errorf("not a Custody hub export: its format is %q, not %q", head.Format, exportFormat)
	}
	if head.Version != exportVersion {
		return nil, fmt.Errorf("a Custody hub export of format version %d: this kubectl custody reads version %d only", head.Version, exportVersion)
	}
	e := &hubExport{}
	if err := yaml.UnmarshalStrict(data, e); err != nil {
		return nil, fmt.Errorf("not a valid Custody hub export: %w", err)
	}
	if e.HubIdentity == "" {
		return nil, errors.New("not a valid Custody hub export: it names no hub identity")
	}
	for i, o := range e.objects() {
		if o.GetKind() == "" || o.GetAPIVersion() == "" || o.GetName() == "" || o.GetUID() == "" {
			return nil, fmt.Errorf("not a valid Custody hub export: object %d has no apiVersion, kind, name or uid", i+1)
		}
	}
	return e, nil
}

// objects are the export's objects.
func (e *hubExport) objects() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(e.Objects))
	for _, o := range e.Objects {
		out = append(out, &unstructured.Unstructured{Object: o})
	}
	return out
}

// stripForExport removes from obj what the hub makes anew when the object is created: its
// version, creation time, generation and managed fields. The uid stays, as the key that
// references to the object are mapped by; import strips it (stripForCreate). So does the
// deletion timestamp, which says that import is to delete the object again.
func stripForExport(obj *unstructured.Unstructured) {
	for _, f := range []string{"resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink", "deletionGracePeriodSeconds"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
}

// stripForCreate is obj as import creates it: without the uid and deletion timestamp it had
// on the hub it was exported from and, when statusApart (its resource has a status
// subresource, which a create resets), without its status, which import writes after it.
func stripForCreate(obj *unstructured.Unstructured, statusApart bool) *unstructured.Unstructured {
	out := obj.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "metadata", "uid")
	unstructured.RemoveNestedField(out.Object, "metadata", "deletionTimestamp")
	if statusApart {
		unstructured.RemoveNestedField(out.Object, "status")
	}
	return out
}

// describe names obj as kubectl does, with its namespace: kind.group/namespace/name.
func describe(obj *unstructured.Unstructured) string {
	gk := obj.GroupVersionKind().GroupKind()
	name := obj.GetName()
	if ns := obj.GetNamespace(); ns != "" {
		name = ns + "/" + name
	}
	return strings.ToLower(gk.String()) + "/" + name
}

// isCustodyGroup tells whether the API group is one of Custody's.
func isCustodyGroup(group string) bool { return strings.HasSuffix(group, ".custody.dev") }

// namespaceKind and the kinds below are the ones export and import treat apart.
var (
	namespaceKind = schema.GroupKind{Kind: "Namespace"}
	pvKind        = schema.GroupKind{Kind: "PersistentVolume"}
	pvcKind       = schema.GroupKind{Kind: "PersistentVolumeClaim"}
)
