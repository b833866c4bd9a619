package versions

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Replaced remembers, for each object a controller reconciles (its request), the
// resourceVersion that the request's last write of each object replaced. While the cache
// still holds that version, it has not seen the write: a decision taken from it would make
// the write again, against a version that is gone (a conflict). The write's own event brings
// the request back once the cache holds it.
type Replaced struct {
	mu sync.Mutex
	// m is, by request, the version each object written replaced, by object.
	m map[types.NamespacedName]map[types.NamespacedName]string
}

// NewReplaced returns an empty Replaced.
func NewReplaced() *Replaced {
	return &Replaced{m: map[types.NamespacedName]map[types.NamespacedName]string{}}
}

// Wrote remembers that the request's write took the object key from version from to
// version to; one that left the version as it was wrote nothing, and no event follows it.
func (r *Replaced) Wrote(req, key types.NamespacedName, from, to string) {
	if from == "" || to == from {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[req] == nil {
		r.m[req] = map[types.NamespacedName]string{}
	}
	r.m[req][key] = from
}

// Behind tells whether rv, the version of the object key the cache holds, is one the
// request's last write of it replaced. A cache that holds another has seen the write: the
// object is forgotten.
func (r *Replaced) Behind(req, key types.NamespacedName, rv string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if replaced, ok := r.m[req][key]; ok && replaced == rv {
		return true
	}
	delete(r.m[req], key)
	if len(r.m[req]) == 0 {
		delete(r.m, req)
	}
	return false
}

// Forget drops a request that is gone, or that writes no more, with every object it wrote.
func (r *Replaced) Forget(req types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, req)
}
