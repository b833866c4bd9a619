package placedcache

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// informerKey tells the informers of a type apart as controller-runtime does: a typed, an
// unstructured and a metadata-only informer of one kind are three.
type informerKey string

func keyOf(obj client.Object, scheme *runtime.Scheme) (informerKey, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return "", err
	}
	return informerKey(fmt.Sprintf("%T %s", obj, gvk)), nil
}

// informer is one type's informer over every placed namespace: what is added to it is added
// to each namespace's informer of the type, now and as namespaces are placed. Each
// namespace's informer has one handler of its own, which hands every event to the handlers
// added here: client-go gives each handler of an informer a buffer of its own, which, for
// thousands of informers, would weigh more than their objects. Its Cache's lock guards
// attach and detach; mu guards the rest.
type informer struct {
	proto  client.Object
	scheme *runtime.Scheme

	mu            sync.Mutex
	spaces        map[string]*fanout
	registrations []*registration
	indexers      []toolscache.Indexers
}

var _ cache.Informer = &informer{}

// fanout is the one handler of a namespace's informer; ctx ends when the namespace leaves.
type fanout struct {
	ctx    context.Context
	inf    cache.Informer
	reader client.Reader

	mu       sync.RWMutex
	handlers []*registration
}

// registration is one handler added to an informer.
type registration struct {
	handler toolscache.ResourceEventHandler
}

// attach adds the namespace's informer of the type, from nc, with every indexer, and one
// handler for every registration: client-go gives it the objects already there.
func (i *informer) attach(ctx context.Context, namespace string, nc cache.Cache) error {
	inf, err := nc.GetInformer(ctx, i.proto, cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, idx := range i.indexers {
		if err := inf.AddIndexers(idx); err != nil {
			return err
		}
	}
	f := &fanout{ctx: ctx, inf: inf, reader: nc, handlers: slices.Clone(i.registrations)}
	if _, err = inf.AddEventHandler(f); err != nil {
		return err
	}
	i.spaces[namespace] = f
	return nil
}

// detach forgets a namespace whose cache stopped.
func (i *informer) detach(namespace string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.spaces, namespace)
}

func (f *fanout) each(do func(toolscache.ResourceEventHandler)) {
	f.mu.RLock()
	handlers := f.handlers
	f.mu.RUnlock()
	for _, r := range handlers {
		do(r.handler)
	}
}

func (f *fanout) OnAdd(obj any, initial bool) {
	f.each(func(h toolscache.ResourceEventHandler) { h.OnAdd(obj, initial) })
}

func (f *fanout) OnUpdate(old, obj any) {
	f.each(func(h toolscache.ResourceEventHandler) { h.OnUpdate(old, obj) })
}

func (f *fanout) OnDelete(obj any) {
	f.each(func(h toolscache.ResourceEventHandler) { h.OnDelete(obj) })
}

// join adds r to the handlers of a namespace's informer that runs already, and gives it the
// objects there, as client-go gives a new handler, once the informer synced: an object may
// reach r twice, never not at all.
func (f *fanout) join(r *registration, list client.ObjectList) {
	f.mu.Lock()
	f.handlers = append(slices.Clone(f.handlers), r)
	f.mu.Unlock()
	go func() {
		if err := f.reader.List(f.ctx, list); err != nil {
			return // the namespace left
		}
		_ = apimeta.EachListItem(list, func(obj runtime.Object) error {
			r.handler.OnAdd(obj, true)
			return nil
		})
	}()
}

func (f *fanout) leave(r *registration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers = slices.DeleteFunc(slices.Clone(f.handlers), func(h *registration) bool { return h == r })
}

// list is an empty list of the informer's type.
func (i *informer) list() (client.ObjectList, error) {
	gvk, err := apiutil.GVKForObject(i.proto, i.scheme)
	if err != nil {
		return nil, err
	}
	gvk.Kind += "List"
	if _, ok := i.proto.(*unstructured.Unstructured); ok {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk)
		return l, nil
	}
	obj, err := i.scheme.New(gvk)
	if err != nil {
		return nil, err
	}
	return obj.(client.ObjectList), nil
}

func (i *informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{})
}

func (i *informer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions adds the handler to every namespace's informer, now and as
// namespaces are placed. The options' resync period is not kept: the syncer's caches do not
// resync.
func (i *informer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, _ toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	r := &registration{handler: handler}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.spaces {
		list, err := i.list()
		if err != nil {
			return nil, err
		}
		f.join(r, list)
	}
	i.registrations = append(i.registrations, r)
	return r, nil
}

// RemoveEventHandler removes a handler from every namespace's informer.
func (i *informer) RemoveEventHandler(h toolscache.ResourceEventHandlerRegistration) error {
	r, ok := h.(*registration)
	if !ok {
		return fmt.Errorf("registration %T is not this informer's", h)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.spaces {
		f.leave(r)
	}
	i.registrations = slices.DeleteFunc(i.registrations, func(other *registration) bool { return other == r })
	return nil
}

// AddIndexers adds the indexers to every namespace's informer, now and as namespaces are
// placed.
func (i *informer) AddIndexers(indexers toolscache.Indexers) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.spaces {
		if err := f.inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	i.indexers = append(i.indexers, indexers)
	return nil
}

// HasSynced is true: a namespace's objects reach the handlers as its informer lists them,
// and reads there wait for them (see Cache.WaitForCacheSync).
func (i *informer) HasSynced() bool { return true }

func (i *informer) HasSyncedChecker() toolscache.DoneChecker { return synced{} }

// IsStopped tells whether every namespace's informer stopped; with none placed, none runs.
func (i *informer) IsStopped() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, f := range i.spaces {
		if !f.inf.IsStopped() {
			return false
		}
	}
	return true
}

// HasSynced is true, as the informer's.
func (r *registration) HasSynced() bool { return true }

func (r *registration) HasSyncedChecker() toolscache.DoneChecker { return synced{} }

// synced is the DoneChecker of what is synced from the start.
type synced struct{}

func (synced) Name() string { return "informer over placed namespaces" }

var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

func (synced) Done() <-chan struct{} { return closed }
