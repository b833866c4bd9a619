package placedcache

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// syncPoll is how often a DoneChecker looks whether its informers synced.
const syncPoll = 10 * time.Millisecond

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
// to each namespace's informer of the type, now and as namespaces are placed. Its Cache's
// lock guards attach and detach; mu guards the registrations and the namespaces' informers.
type informer struct {
	proto client.Object

	mu            sync.Mutex
	spaces        map[string]cache.Informer
	registrations []*registration
	indexers      []toolscache.Indexers
}

var _ cache.Informer = &informer{}

// registration is one handler added to an informer, with its registration in each
// namespace's informer.
type registration struct {
	handler toolscache.ResourceEventHandler
	options toolscache.HandlerOptions

	mu      sync.Mutex
	handles map[string]toolscache.ResourceEventHandlerRegistration
}

// attach adds the namespace's informer of the type, from nc, with every handler and indexer.
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
	for _, r := range i.registrations {
		if err := r.add(namespace, inf); err != nil {
			return err
		}
	}
	i.spaces[namespace] = inf
	return nil
}

// detach forgets a namespace whose cache stopped.
func (i *informer) detach(namespace string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	delete(i.spaces, namespace)
	for _, r := range i.registrations {
		r.mu.Lock()
		delete(r.handles, namespace)
		r.mu.Unlock()
	}
}

func (r *registration) add(namespace string, inf cache.Informer) error {
	h, err := inf.AddEventHandlerWithOptions(r.handler, r.options)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handles[namespace] = h
	return nil
}

func (i *informer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{})
}

func (i *informer) AddEventHandlerWithResyncPeriod(handler toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.AddEventHandlerWithOptions(handler, toolscache.HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions adds the handler to every namespace's informer, now and as
// namespaces are placed.
func (i *informer) AddEventHandlerWithOptions(handler toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	r := &registration{handler: handler, options: options, handles: map[string]toolscache.ResourceEventHandlerRegistration{}}
	i.mu.Lock()
	defer i.mu.Unlock()
	for namespace, inf := range i.spaces {
		if err := r.add(namespace, inf); err != nil {
			return nil, err
		}
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
	for namespace, inf := range i.spaces {
		r.mu.Lock()
		handle, ok := r.handles[namespace]
		r.mu.Unlock()
		if !ok {
			continue
		}
		if err := inf.RemoveEventHandler(handle); err != nil {
			return err
		}
	}
	for k, other := range i.registrations {
		if other == r {
			i.registrations = append(i.registrations[:k], i.registrations[k+1:]...)
			break
		}
	}
	return nil
}

// AddIndexers adds the indexers to every namespace's informer, now and as namespaces are
// placed.
func (i *informer) AddIndexers(indexers toolscache.Indexers) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, inf := range i.spaces {
		if err := inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	i.indexers = append(i.indexers, indexers)
	return nil
}

// HasSynced tells whether every namespace's informer has synced; with none placed, it has.
func (i *informer) HasSynced() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, inf := range i.spaces {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

func (i *informer) HasSyncedChecker() toolscache.DoneChecker {
	return checker{name: fmt.Sprintf("%T informer over placed namespaces", i.proto), synced: i.HasSynced}
}

// IsStopped tells whether every namespace's informer stopped; with none placed, none runs.
func (i *informer) IsStopped() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	for _, inf := range i.spaces {
		if !inf.IsStopped() {
			return false
		}
	}
	return true
}

// HasSynced tells whether the handler has seen every namespace's initial objects.
func (r *registration) HasSynced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range r.handles {
		if !h.HasSynced() {
			return false
		}
	}
	return true
}

func (r *registration) HasSyncedChecker() toolscache.DoneChecker {
	return checker{name: "handler over placed namespaces", synced: r.HasSynced}
}

// checker is a DoneChecker of a condition: its channel closes once the condition holds.
type checker struct {
	name   string
	synced func() bool
}

func (c checker) Name() string { return c.name }

func (c checker) Done() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !c.synced() {
			time.Sleep(syncPoll)
		}
	}()
	return done
}
