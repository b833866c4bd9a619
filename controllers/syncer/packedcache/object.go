package packedcache

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// Object is an unstructured object as a packed cache holds it: its whole content encoded in
// one string. Its kind, name, namespace and resource version, which the informer and the
// cache's reader look at for every object, are read out of that string once, and share its
// bytes. Every other read decodes what it reads; a write decodes the whole object and packs
// it again.
//
// It is a runtime.Unstructured, so that controller-runtime keeps it in the informer of
// unstructured objects of its kind; ObjectList lists it.
type Object struct {
	metav1.TypeMeta
	name, namespace, resourceVersion string
	body                             string
}

var (
	_ runtime.Unstructured = &Object{}
	_ metav1.Object        = &Object{}
)

// Pack is a toolscache.TransformFunc that packs an unstructured object into an Object. It
// leaves any other object as it is.
func Pack(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	o := &Object{}
	if err := o.pack(u.Object); err != nil {
		return nil, fmt.Errorf("packing %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	return o, nil
}

var _ toolscache.TransformFunc = Pack

// first are the fields of an object that a packed object encodes before the others: what
// is read in place of every object in a loop is found at once.
var first = []string{"apiVersion", "kind", "metadata"}

// pack makes o the packed content.
func (o *Object) pack(content map[string]any) error {
	buf := binary.AppendUvarint([]byte{tagMap}, uint64(len(content)))
	var err error
	for _, k := range first {
		if v, ok := content[k]; ok {
			if buf, err = encode(appendString(buf, k, true), v, wordValued[k]); err != nil {
				return err
			}
		}
	}
	for k, v := range content {
		if !slices.Contains(first, k) {
			if buf, err = encode(appendString(buf, k, true), v, wordValued[k]); err != nil {
				return err
			}
		}
	}
	body := string(buf)
	str := func(path ...string) string {
		s, _ := lookupString(body, path...)
		return s
	}
	*o = Object{
		TypeMeta: metav1.TypeMeta{APIVersion: str("apiVersion"), Kind: str("kind")},
		name:     str("metadata", "name"), namespace: str("metadata", "namespace"),
		resourceVersion: str("metadata", "resourceVersion"),
		body:            body,
	}
	return nil
}

// Unpack is the object whole, as an Unstructured of its own: its strings share the packed
// object's bytes.
func (o *Object) Unpack() (*unstructured.Unstructured, error) {
	d := decoder{data: o.body}
	v, err := d.value()
	if err != nil {
		return nil, fmt.Errorf("unpacking %s %s: %w", o.Kind, o.name, err)
	}
	content, ok := v.(map[string]any)
	if !ok || d.at != len(d.data) {
		return nil, fmt.Errorf("unpacking %s %s: not one map", o.Kind, o.name)
	}
	u := &unstructured.Unstructured{Object: content}
	// A cache's reader sets the kind it read on what it returns.
	if gvk := o.GroupVersionKind(); !gvk.Empty() {
		u.SetGroupVersionKind(gvk)
	}
	return u, nil
}

// mustUnpack is Unpack where an error cannot be returned. Only what pack encoded is ever
// unpacked: an error is a bug, which must not pass for an object without its content.
func (o *Object) mustUnpack() *unstructured.Unstructured {
	u, err := o.Unpack()
	if err != nil {
		panic(err)
	}
	return u
}

// NestedString is the string at the path of fields in the object, read without decoding
// anything else: ok is false when there is none, and s is "" when the value there is not a
// string, as unstructured.NestedString reads it.
func (o *Object) NestedString(fields ...string) (s string, ok bool) {
	return lookupString(o.body, fields...)
}

// MetadataEntry is one entry of the object's labels or annotations (field), read in place
// (see transform.Annotation).
func (o *Object) MetadataEntry(field, key string) (string, bool) {
	return o.NestedString("metadata", field, key)
}

// metadata is an Unstructured that holds only the object's metadata, decoded: what the
// getters of metav1.Object read.
func (o *Object) metadata() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if d, ok := lookup(o.body, "metadata"); ok {
		v, err := d.value()
		if err != nil {
			panic(fmt.Errorf("unpacking the metadata of %s %s: %w", o.Kind, o.name, err))
		}
		u.Object["metadata"] = v
	}
	return u
}

// update applies set to the object unpacked, and packs it again.
func (o *Object) update(set func(*unstructured.Unstructured)) {
	u := o.mustUnpack()
	set(u)
	if err := o.pack(u.Object); err != nil {
		panic(fmt.Errorf("packing %s %s again: %w", o.Kind, o.name, err))
	}
}

// DeepCopyObject copies the object: its strings, which never change, are shared.
func (o *Object) DeepCopyObject() runtime.Object {
	c := *o
	return &c
}

func (o *Object) NewEmptyInstance() runtime.Unstructured {
	return &Object{TypeMeta: o.TypeMeta}
}

// UnstructuredContent is the object unpacked.
func (o *Object) UnstructuredContent() map[string]any { return o.mustUnpack().Object }

// SetUnstructuredContent packs content into the object.
func (o *Object) SetUnstructuredContent(content map[string]any) {
	if err := o.pack(content); err != nil {
		panic(fmt.Errorf("packing %s: %w", content["kind"], err))
	}
}

func (o *Object) IsList() bool { return false }

var errNotList = errors.New("a packed object is not a list")

func (o *Object) EachListItem(func(runtime.Object) error) error { return errNotList }

func (o *Object) EachListItemWithAlloc(func(runtime.Object) error) error { return errNotList }

// The getters of metav1.Object read what an Unstructured's read, as it reads it.

func (o *Object) GetName() string            { return o.name }
func (o *Object) GetNamespace() string       { return o.namespace }
func (o *Object) GetResourceVersion() string { return o.resourceVersion }

func (o *Object) GetUID() types.UID {
	uid, _ := o.NestedString("metadata", "uid")
	return types.UID(uid)
}

func (o *Object) GetDeletionTimestamp() *metav1.Time {
	var t metav1.Time
	s, _ := o.NestedString("metadata", "deletionTimestamp")
	_ = t.UnmarshalQueryParameter(s)
	if t.IsZero() {
		return nil
	}
	return &t
}

func (o *Object) GetGenerateName() string           { return o.metadata().GetGenerateName() }
func (o *Object) GetGeneration() int64              { return o.metadata().GetGeneration() }
func (o *Object) GetSelfLink() string               { return o.metadata().GetSelfLink() }
func (o *Object) GetCreationTimestamp() metav1.Time { return o.metadata().GetCreationTimestamp() }
func (o *Object) GetDeletionGracePeriodSeconds() *int64 {
	return o.metadata().GetDeletionGracePeriodSeconds()
}
func (o *Object) GetLabels() map[string]string      { return o.metadata().GetLabels() }
func (o *Object) GetAnnotations() map[string]string { return o.metadata().GetAnnotations() }
func (o *Object) GetFinalizers() []string           { return o.metadata().GetFinalizers() }
func (o *Object) GetOwnerReferences() []metav1.OwnerReference {
	return o.metadata().GetOwnerReferences()
}
func (o *Object) GetManagedFields() []metav1.ManagedFieldsEntry {
	return o.metadata().GetManagedFields()
}

// The setters of metav1.Object unpack the object, set the field as an Unstructured does, and
// pack it again. Nothing reads a cache's objects to change them: they are for completeness.

func (o *Object) SetName(v string) { o.update(func(u *unstructured.Unstructured) { u.SetName(v) }) }
func (o *Object) SetNamespace(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetNamespace(v) })
}
func (o *Object) SetGenerateName(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetGenerateName(v) })
}
func (o *Object) SetUID(v types.UID) { o.update(func(u *unstructured.Unstructured) { u.SetUID(v) }) }
func (o *Object) SetResourceVersion(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetResourceVersion(v) })
}
func (o *Object) SetGeneration(v int64) {
	o.update(func(u *unstructured.Unstructured) { u.SetGeneration(v) })
}
func (o *Object) SetSelfLink(v string) {
	o.update(func(u *unstructured.Unstructured) { u.SetSelfLink(v) })
}
func (o *Object) SetCreationTimestamp(v metav1.Time) {
	o.update(func(u *unstructured.Unstructured) { u.SetCreationTimestamp(v) })
}
func (o *Object) SetDeletionTimestamp(v *metav1.Time) {
	o.update(func(u *unstructured.Unstructured) { u.SetDeletionTimestamp(v) })
}
func (o *Object) SetDeletionGracePeriodSeconds(v *int64) {
	o.update(func(u *unstructured.Unstructured) { u.SetDeletionGracePeriodSeconds(v) })
}
func (o *Object) SetLabels(v map[string]string) {
	o.update(func(u *unstructured.Unstructured) { u.SetLabels(v) })
}
func (o *Object) SetAnnotations(v map[string]string) {
	o.update(func(u *unstructured.Unstructured) { u.SetAnnotations(v) })
}
func (o *Object) SetFinalizers(v []string) {
	o.update(func(u *unstructured.Unstructured) { u.SetFinalizers(v) })
}
func (o *Object) SetOwnerReferences(v []metav1.OwnerReference) {
	o.update(func(u *unstructured.Unstructured) { u.SetOwnerReferences(v) })
}
func (o *Object) SetManagedFields(v []metav1.ManagedFieldsEntry) {
	o.update(func(u *unstructured.Unstructured) { u.SetManagedFields(v) })
}

// ObjectList is a list of packed objects: listed from a packed cache, its items are what
// the cache holds, unpacked by no one. A reader that goes over every object of a kind, and
// reads a few fields of each, lists them so (see Object.NestedString).
type ObjectList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []Object
}

var (
	_ runtime.Unstructured = &ObjectList{}
	_ metav1.ListInterface = &ObjectList{}
)

// NewList is an empty list of packed objects of the kind.
func NewList(gvk schema.GroupVersionKind) *ObjectList {
	l := &ObjectList{}
	l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	return l
}

func (l *ObjectList) DeepCopyObject() runtime.Object {
	c := *l
	c.ListMeta = *l.ListMeta.DeepCopy()
	c.Items = slices.Clone(l.Items)
	return &c
}

func (l *ObjectList) NewEmptyInstance() runtime.Unstructured {
	return &ObjectList{TypeMeta: l.TypeMeta}
}

// UnstructuredContent is the list with its items unpacked.
func (l *ObjectList) UnstructuredContent() map[string]any {
	items := make([]any, len(l.Items))
	for i := range l.Items {
		items[i] = l.Items[i].UnstructuredContent()
	}
	return map[string]any{"apiVersion": l.APIVersion, "kind": l.Kind, "items": items}
}

// SetUnstructuredContent packs the items of content into the list.
func (l *ObjectList) SetUnstructuredContent(content map[string]any) {
	u := &unstructured.UnstructuredList{}
	u.SetUnstructuredContent(content)
	l.TypeMeta = metav1.TypeMeta{APIVersion: u.GetAPIVersion(), Kind: u.GetKind()}
	l.Items = make([]Object, len(u.Items))
	for i := range u.Items {
		l.Items[i].SetUnstructuredContent(u.Items[i].Object)
	}
}

func (l *ObjectList) IsList() bool { return true }

func (l *ObjectList) EachListItem(f func(runtime.Object) error) error {
	for i := range l.Items {
		if err := f(&l.Items[i]); err != nil {
			return err
		}
	}
	return nil
}

func (l *ObjectList) EachListItemWithAlloc(f func(runtime.Object) error) error {
	for i := range l.Items {
		if err := f(l.Items[i].DeepCopyObject()); err != nil {
			return err
		}
	}
	return nil
}
