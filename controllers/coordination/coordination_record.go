package coordination

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// recordVersions remembers, per claim, the resourceVersion of the VolumeOwnership that this
// controller last wrote. The controller is the record's only writer, so a cached record of
// another version is older than what it wrote: the claim's cache may already show the
// actions taken after that write (a target removed on the strength of a Fence) while the
// record's cache does not yet show the write (the target in FencedOff), and a decision
// taken from the two would undo the record. Such a record is read past the cache.
type recordVersions struct {
	mu sync.Mutex
	m  map[types.NamespacedName]string
}

func newRecordVersions() *recordVersions {
	return &recordVersions{m: map[types.NamespacedName]string{}}
}

// stale tells whether rv, the version the cache holds, is not the one last written.
func (v *recordVersions) stale(key types.NamespacedName, rv string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	written, ok := v.m[key]
	return ok && written != rv
}

// wrote remembers rv as the version last written, or read past the cache.
func (v *recordVersions) wrote(key types.NamespacedName, rv string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m[key] = rv
}

// forget drops the claim, which is gone.
func (v *recordVersions) forget(key types.NamespacedName) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, key)
}
