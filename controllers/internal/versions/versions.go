package versions

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Written remembers, per object, the resourceVersion the controller last wrote or read past
// the cache.
type Written struct {
	mu sync.Mutex
	m  map[types.NamespacedName]string
}

// New returns an empty Written.
func New() *Written { return &Written{m: map[types.NamespacedName]string{}} }

// Wrote remembers rv as the object's version last written, or read past the cache.
func (w *Written) Wrote(key types.NamespacedName, rv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.m[key] = rv
}

// Forget drops an object that is gone.
func (w *Written) Forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// stale tells whether rv, the version the cache holds, is not the one last written. The
// cache may hold a newer one another writer made: reading it past the cache costs one read.
// An object the API server said gone, which the cache no longer holds either, is forgotten.
func (w *Written) stale(key types.NamespacedName, rv string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	written, ok := w.m[key]
	if ok && written == "" && rv == "" {
		delete(w.m, key)
	}
	return ok && written != rv
}

// Get reads the object from the cache or, when the cache does not hold the version last
// written, from the API server. It returns the NotFound error of an object not found; one
// the API server did not find is left with only its name.
func Get[T any, P interface {
	*T
	client.Object
}](ctx context.Context, w *Written, cache, live client.Reader, key types.NamespacedName, obj P) error {
	err := cache.Get(ctx, key, obj)
	if err != nil && client.IgnoreNotFound(err) != nil {
		return err
	}
	if !w.stale(key, obj.GetResourceVersion()) {
		return err
	}
	read := P(new(T))
	read.SetNamespace(key.Namespace)
	read.SetName(key.Name)
	err = live.Get(ctx, key, read)
	if err != nil && client.IgnoreNotFound(err) != nil {
		return err
	}
	w.Wrote(key, read.GetResourceVersion())
	*obj = *read
	return err
}
