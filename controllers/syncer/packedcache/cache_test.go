package packedcache

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// store is a cache of objects as its transform left them, read as controller-runtime's cache
// reader reads an informer's: a copy of the object held, which must be of the type asked for.
type store struct {
	cache.Cache
	opts    cache.Options
	objects []runtime.Object
	// informer is the one informer, of every kind.
	informer *fakeInformer
	extract  client.IndexerFunc
}

func newStore(t *testing.T, objs ...*unstructured.Unstructured) (*store, cache.Cache) {
	t.Helper()
	s := &store{informer: &fakeInformer{}}
	c, err := New(func(_ *rest.Config, opts cache.Options) (cache.Cache, error) {
		s.opts = opts
		return s, nil
	})(nil, cache.Options{DefaultTransform: func(obj any) (any, error) {
		obj.(*unstructured.Unstructured).SetManagedFields(nil)
		return obj, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range objs {
		obj, err := s.opts.DefaultTransform(u.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		s.objects = append(s.objects, obj.(runtime.Object))
	}
	return s, c
}

func (s *store) Get(_ context.Context, key client.ObjectKey, out client.Object, _ ...client.GetOption) error {
	for _, obj := range s.objects {
		if m := obj.(metav1.Object); m.GetNamespace() != key.Namespace || m.GetName() != key.Name {
			continue
		}
		held := obj.DeepCopyObject()
		if !reflect.TypeOf(held).AssignableTo(reflect.TypeOf(out)) {
			return fmt.Errorf("cache had type %T, but %T was asked for", held, out)
		}
		reflect.ValueOf(out).Elem().Set(reflect.ValueOf(held).Elem())
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

func (s *store) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := (&client.ListOptions{}).ApplyOptions(opts)
	var items []runtime.Object
	for _, obj := range s.objects {
		if lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(obj.(metav1.Object).GetLabels())) {
			items = append(items, obj.DeepCopyObject())
		}
	}
	return apimeta.SetList(list, items)
}

func (s *store) GetInformer(context.Context, client.Object, ...cache.InformerGetOption) (cache.Informer, error) {
	return s.informer, nil
}

func (s *store) IndexField(_ context.Context, _ client.Object, _ string, extract client.IndexerFunc) error {
	s.extract = extract
	return nil
}

// fakeInformer keeps the last handler and indexers added to it.
type fakeInformer struct {
	cache.Informer
	handler  toolscache.ResourceEventHandler
	indexers toolscache.Indexers
}

func (f *fakeInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	f.handler = h
	return nil, nil
}

func (f *fakeInformer) AddIndexers(indexers toolscache.Indexers) error {
	f.indexers = indexers
	return nil
}

func TestCacheReads(t *testing.T) {
	ctx := context.Background()
	db, web := claim(t), claim(t)
	web.SetName("web")
	web.SetLabels(map[string]string{"app": "web"})
	db.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl"}})
	s, c := newStore(t, db, web)
	db.SetManagedFields(nil) // as the options' transform leaves it, before Pack
	if _, ok := s.objects[0].(*Object); !ok {
		t.Fatalf("the cache holds a %T", s.objects[0])
	}

	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(db.GroupVersionKind())
	if err := c.Get(ctx, client.ObjectKeyFromObject(db), got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Object, db.Object) {
		t.Errorf("Get read\n%v\nwant\n%v", got.Object, db.Object)
	}

	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(db.GroupVersionKind().GroupVersion().WithKind("PersistentVolumeClaimList"))
	if err := c.List(ctx, list, client.MatchingLabels{"app": "web"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || !reflect.DeepEqual(list.Items[0].Object, web.Object) {
		t.Errorf("List by label read %v, want %v", list.Items, web.Object)
	}

	packedList := NewList(db.GroupVersionKind())
	if err := c.List(ctx, packedList); err != nil {
		t.Fatal(err)
	}
	if len(packedList.Items) != 2 || packedList.Items[1].GetName() != "web" {
		t.Errorf("packed List read %v", packedList.Items)
	}
}

func TestCacheInformers(t *testing.T) {
	ctx := context.Background()
	db := claim(t)
	s, c := newStore(t, db)
	held := s.objects[0]

	var seen []any
	inf, err := c.GetInformer(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { seen = append(seen, obj) },
		UpdateFunc: func(old, obj any) { seen = append(seen, old, obj) },
		DeleteFunc: func(obj any) { seen = append(seen, obj.(toolscache.DeletedFinalStateUnknown).Obj) },
	}); err != nil {
		t.Fatal(err)
	}
	s.informer.handler.OnAdd(held, true)
	s.informer.handler.OnUpdate(held, held)
	s.informer.handler.OnDelete(toolscache.DeletedFinalStateUnknown{Key: "team-a/data", Obj: held})
	if err := inf.AddIndexers(toolscache.Indexers{"i": func(obj any) ([]string, error) {
		seen = append(seen, obj)
		return nil, nil
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.informer.indexers["i"](held); err != nil {
		t.Fatal(err)
	}
	if err := c.IndexField(ctx, db, "f", func(obj client.Object) []string {
		seen = append(seen, obj)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	s.extract(held.(client.Object))

	if len(seen) != 6 {
		t.Fatalf("%d objects seen, want 6", len(seen))
	}
	for i, obj := range seen {
		if u, ok := obj.(*unstructured.Unstructured); !ok || !reflect.DeepEqual(u.Object, db.Object) {
			t.Errorf("object %d seen as %#v, want the object whole", i, obj)
		}
	}
}

// TestNewInformer checks that the informer of a kind that a packed read asks for first
// watches Unstructured objects, which it packs.
func TestNewInformer(t *testing.T) {
	var example runtime.Object
	newInformer := unstructuredInformer(func(_ toolscache.ListerWatcher, obj runtime.Object, _ time.Duration, _ toolscache.Indexers) toolscache.SharedIndexInformer {
		example = obj
		return nil
	})
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "PersistentVolume"}
	packed := &Object{}
	packed.SetGroupVersionKind(gvk)
	newInformer(nil, packed, 0, nil)
	if u, ok := example.(*unstructured.Unstructured); !ok || u.GroupVersionKind() != gvk {
		t.Errorf("a packed object's informer was made for %#v", example)
	}
}
