package packedcache

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// claim is a decoded claim with a field of every type a decoded object holds.
func claim(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"PersistentVolumeClaim",
		"metadata":{"name":"data","namespace":"team-a","uid":"u-1","resourceVersion":"42","generation":3,
			"generateName":"da","creationTimestamp":"2026-11-30T08:59:13Z","deletionTimestamp":"2026-11-30T09:00:00Z",
			"deletionGracePeriodSeconds":0,"labels":{"app":"db"},"annotations":{"a":"1","empty":""},
			"finalizers":["kubernetes.io/pvc-protection"],
			"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u-2","controller":true}]},
		"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}},"volumeName":"",
			"selector":null,"dataSource":{},"ratio":1.5,"whole":1e3,"big":-9007199254740993,"list":[]},
		"status":{"phase":"Bound","conditions":[{"type":"Unused","status":"True","lastProbeTime":null}]}}`)); err != nil {
		t.Fatal(err)
	}
	return u
}

func packed(t *testing.T, u *unstructured.Unstructured) *Object {
	t.Helper()
	obj, err := Pack(u.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*Object)
}

func TestPackUnpack(t *testing.T) {
	u := claim(t)
	u.Object["number"] = json.Number("12.50")
	o := packed(t, u)
	got, err := o.Unpack()
	if err != nil {
		t.Fatal(err)
	}
	// Exactly, types and all: a float that is whole stays a float, an empty list a list.
	if !reflect.DeepEqual(got.Object, u.Object) {
		t.Errorf("unpacked\n%#v\nwant\n%#v", got.Object, u.Object)
	}
	if o.GetName() != "data" || o.GetNamespace() != "team-a" || o.GetResourceVersion() != "42" ||
		o.GroupVersionKind() != u.GroupVersionKind() {
		t.Errorf("packed object is %s %s/%s at %s", o.GroupVersionKind(), o.GetNamespace(), o.GetName(), o.GetResourceVersion())
	}
	if _, err := Pack(&unstructured.Unstructured{Object: map[string]any{"n": int32(1)}}); err == nil {
		t.Error("packed a type decoded JSON never holds")
	}
	typed := &metav1.PartialObjectMetadata{}
	if mustPack(t, typed) != any(typed) {
		t.Error("packed an object that is not unstructured")
	}
}

func mustPack(t *testing.T, obj any) any {
	t.Helper()
	out, err := Pack(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTruncated checks that every truncated or altered encoding fails to unpack, as an error.
func TestTruncated(t *testing.T) {
	o := packed(t, claim(t))
	for n := range len(o.body) {
		cut := *o
		cut.body = o.body[:n]
		if _, err := cut.Unpack(); err == nil {
			t.Fatalf("unpacked the first %d bytes of %d", n, len(o.body))
		}
	}
	bad := *o
	bad.body = "?" + o.body[1:]
	if _, err := bad.Unpack(); err == nil || !strings.Contains(err.Error(), "unknown tag") {
		t.Errorf("unpacking an unknown tag: %v", err)
	}
}

// TestObjectReads checks that a packed object reads as the Unstructured it was.
func TestObjectReads(t *testing.T) {
	u := claim(t)
	o := packed(t, u)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"uid", o.GetUID(), u.GetUID()},
		{"generation", o.GetGeneration(), u.GetGeneration()},
		{"generateName", o.GetGenerateName(), u.GetGenerateName()},
		{"selfLink", o.GetSelfLink(), u.GetSelfLink()},
		{"creationTimestamp", o.GetCreationTimestamp(), u.GetCreationTimestamp()},
		{"deletionTimestamp", o.GetDeletionTimestamp(), u.GetDeletionTimestamp()},
		{"deletionGracePeriodSeconds", o.GetDeletionGracePeriodSeconds(), u.GetDeletionGracePeriodSeconds()},
		{"labels", o.GetLabels(), u.GetLabels()},
		{"annotations", o.GetAnnotations(), u.GetAnnotations()},
		{"finalizers", o.GetFinalizers(), u.GetFinalizers()},
		{"ownerReferences", o.GetOwnerReferences(), u.GetOwnerReferences()},
		{"managedFields", o.GetManagedFields(), u.GetManagedFields()},
		{"content", o.UnstructuredContent(), u.Object},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if o.GetDeletionTimestamp() == nil {
		t.Error("no deletion timestamp")
	}
	for _, path := range [][]string{
		{"status", "phase"}, {"spec", "volumeName"}, {"spec", "resources", "requests", "storage"},
		{"spec", "missing"}, {"spec", "accessModes"}, {"spec", "ratio"}, {"spec", "selector"}, {"metadata", "labels", "app"},
		{"status", "phase", "deeper"},
	} {
		want, found, _ := unstructured.NestedString(u.Object, path...)
		_, present, _ := unstructured.NestedFieldNoCopy(u.Object, path...)
		if got, ok := o.NestedString(path...); got != want || ok != present {
			t.Errorf("NestedString(%v) = %q, %v; want %q, %v (a string: %v)", path, got, ok, want, present, found)
		}
	}
	for _, tc := range []struct {
		field, key, want string
		ok               bool
	}{
		{"annotations", "a", "1", true}, {"annotations", "empty", "", true}, {"annotations", "none", "", false},
		{"labels", "app", "db", true},
	} {
		if got, ok := o.MetadataEntry(tc.field, tc.key); got != tc.want || ok != tc.ok {
			t.Errorf("MetadataEntry(%s, %s) = %q, %v; want %q, %v", tc.field, tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

// TestObjectWrites checks that a packed object, set as an Unstructured is, reads as it.
func TestObjectWrites(t *testing.T) {
	u := claim(t)
	o := packed(t, u)
	o.SetLabels(map[string]string{"app": "web"})
	o.SetName("other")
	u.SetLabels(map[string]string{"app": "web"})
	u.SetName("other")
	if got := o.UnstructuredContent(); !reflect.DeepEqual(got, u.Object) || o.GetName() != "other" {
		t.Errorf("set, the packed object is %v, want %v", got, u.Object)
	}
	copied := o.DeepCopyObject().(*Object)
	copied.SetNamespace("team-b")
	if o.GetNamespace() != "team-a" {
		t.Error("setting a copy set the original")
	}
}

func TestObjectList(t *testing.T) {
	a, b := claim(t), claim(t)
	b.SetName("logs")
	content := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaimList",
		"items": []any{a.Object, b.Object}}
	l := &ObjectList{}
	l.SetUnstructuredContent(content)
	if len(l.Items) != 2 || l.Items[1].GetName() != "logs" || l.GetObjectKind().GroupVersionKind().Kind != "PersistentVolumeClaimList" {
		t.Fatalf("list of %d, %v", len(l.Items), l.GetObjectKind().GroupVersionKind())
	}
	if got := l.UnstructuredContent(); !reflect.DeepEqual(got, content) {
		t.Errorf("list content %v, want %v", got, content)
	}
	copied := l.DeepCopyObject().(*ObjectList)
	copied.Items[0].SetName("changed")
	if l.Items[0].GetName() != "data" {
		t.Error("setting a copy's item set the original's")
	}
}
