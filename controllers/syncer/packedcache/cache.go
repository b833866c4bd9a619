package packedcache

import (
	"context"
	"maps"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// New is a cache.NewCacheFunc that makes, with next, a cache that holds each unstructured
// object packed (Pack, after the options' transforms), and unpacks it for whoever reads it.
func New(next cache.NewCacheFunc) cache.NewCacheFunc {
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		opts.DefaultTransform = then(opts.DefaultTransform)
		opts.ByObject = maps.Clone(opts.ByObject)
		for obj, by := range opts.ByObject {
			if by.Transform != nil {
				by.Transform = then(by.Transform)
				opts.ByObject[obj] = by
			}
		}
		opts.NewInformer = unstructuredInformer(opts.NewInformer)
		c, err := next(cfg, opts)
		if err != nil {
			return nil, err
		}
		return &Cache{Cache: c}, nil
	}
}

// then is transform, if any, then Pack.
func then(transform toolscache.TransformFunc) toolscache.TransformFunc {
	if transform == nil {
		return Pack
	}
	return func(obj any) (any, error) {
		obj, err := transform(obj)
		if err != nil {
			return nil, err
		}
		return Pack(obj)
	}
}

// newInformerFunc is cache.Options.NewInformer.
type newInformerFunc = func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer

// unstructuredInformer makes, with next (toolscache.NewSharedIndexInformer when nil), the
// informer of a kind of unstructured objects, when a read of packed objects asks for it
// first: its watch decodes Unstructured objects, which it packs.
func unstructuredInformer(next newInformerFunc) newInformerFunc {
	if next == nil {
		next = toolscache.NewSharedIndexInformer
	}
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if o, ok := obj.(*Object); ok {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(o.GroupVersionKind())
			obj = u
		}
		return next(lw, obj, resync, indexers)
	}
}

// Cache is the cache New makes. Whoever reads it unstructured sees each object whole: a Get
// or a List, an event handler, an index function. An ObjectList lists the objects packed.
type Cache struct {
	cache.Cache
}

var _ cache.Cache = &Cache{}

// Get reads an object; an unstructured one is read packed, and unpacked.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	packed := &Object{TypeMeta: typeMeta(u)}
	if err := c.Cache.Get(ctx, key, packed, opts...); err != nil {
		return err
	}
	whole, err := packed.Unpack()
	if err != nil {
		return err
	}
	u.Object = whole.Object
	return nil
}

// List lists objects; unstructured ones are listed packed, and unpacked.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	l, ok := list.(*unstructured.UnstructuredList)
	if !ok {
		return c.Cache.List(ctx, list, opts...)
	}
	packed := &ObjectList{TypeMeta: typeMeta(l)}
	if err := c.Cache.List(ctx, packed, opts...); err != nil {
		return err
	}
	items := make([]unstructured.Unstructured, len(packed.Items))
	for i := range packed.Items {
		whole, err := packed.Items[i].Unpack()
		if err != nil {
			return err
		}
		items[i] = *whole
	}
	l.Items = items
	return nil
}

func typeMeta(obj runtime.Object) metav1.TypeMeta {
	gvk := obj.GetObjectKind().GroupVersionKind()
	apiVersion, kind := gvk.ToAPIVersionAndKind()
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// GetInformer is the informer of obj's type, whose handlers and indexers see objects whole.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	return &informer{Informer: inf}, nil
}

// GetInformerForKind is GetInformer for a kind.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	return &informer{Informer: inf}, nil
}

// IndexField adds a field index whose function sees objects whole.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	return c.Cache.IndexField(ctx, obj, field, func(o client.Object) []string {
		return extract(unpacked(o).(client.Object))
	})
}

// informer is an informer whose handlers and indexers see objects whole.
type informer struct {
	cache.Informer
}

func (i *informer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandler(handler{h})
}

func (i *informer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithResyncPeriod(handler{h}, resync)
}

func (i *informer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, opts toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithOptions(handler{h}, opts)
}

func (i *informer) AddIndexers(indexers toolscache.Indexers) error {
	whole := make(toolscache.Indexers, len(indexers))
	for name, index := range indexers {
		whole[name] = func(obj any) ([]string, error) { return index(unpacked(obj)) }
	}
	return i.Informer.AddIndexers(whole)
}

// handler hands each event's objects, unpacked, to next.
type handler struct {
	next toolscache.ResourceEventHandler
}

func (h handler) OnAdd(obj any, initial bool) { h.next.OnAdd(unpacked(obj), initial) }

func (h handler) OnUpdate(old, obj any) { h.next.OnUpdate(unpacked(old), unpacked(obj)) }

func (h handler) OnDelete(obj any) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		d.Obj = unpacked(d.Obj)
		h.next.OnDelete(d)
		return
	}
	h.next.OnDelete(unpacked(obj))
}

// unpacked is obj unpacked when it is packed, else obj.
func unpacked(obj any) any {
	if o, ok := obj.(*Object); ok {
		return o.mustUnpack()
	}
	return obj
}
