package syncio

import (
	"context"
	"fmt"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// checkTimeout bounds one read of the hub's identity.
const checkTimeout = 10 * time.Second

// HubCheck confirms, before the syncer removes or unfences anything in its member, that the
// hub it reads is still the hub it started with. A hub wiped under a running syncer answers
// with nothing placed anywhere, which the syncer's caches show as every object gone: were it
// another hub (or the same one, empty, before an import restored it), removing the copies
// would remove the member's workloads and volumes. The removal then fails and is retried
// with its controller's backoff, until the hub has the identity again (an import restored
// it) or the syncer is restarted for another hub. While an import restores the hub's objects,
// the hub has its identity back but not yet all its objects: the removal waits until the
// import says it completed (workloadv1alpha1.HubRestoringAnnotation).
//
// Each Confirm reads the identity with a request sent after it was called, so that no
// answer older than the caller's decision confirms it; callers that come while a read is
// under way share the next one, so that a burst of removals costs two reads, not one each.
type HubCheck struct {
	// Reader reads the hub past the syncer's caches.
	Reader client.Reader
	// Identity is the identity of the hub the syncer started with.
	Identity string

	mu      sync.Mutex
	reading bool
	next    *identityRead
}

// identityRead is one read of the hub's identity that callers wait for.
type identityRead struct {
	done chan struct{}
	err  error
}

// Confirm returns nil when the hub has the identity the syncer started with, and an error
// saying what it has instead otherwise, or when it cannot be read.
func (h *HubCheck) Confirm(ctx context.Context) error {
	h.mu.Lock()
	if h.next == nil {
		h.next = &identityRead{done: make(chan struct{})}
	}
	r := h.next
	if !h.reading {
		h.reading, h.next = true, nil
		go h.read(r)
	}
	h.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// read runs r, then the read callers asked for meanwhile, until none is asked for.
func (h *HubCheck) read(r *identityRead) {
	for r != nil {
		r.err = h.compare()
		close(r.done)
		h.mu.Lock()
		r, h.next = h.next, nil
		h.reading = r != nil
		h.mu.Unlock()
	}
}

// compare reads the hub's identity and compares it with the one the syncer started with.
func (h *HubCheck) compare() error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	id, restoring, err := workloadv1alpha1.ReadHubState(ctx, h.Reader)
	switch {
	case err != nil:
		return fmt.Errorf("not removing anything from the member before the hub's identity is confirmed: %w", err)
	case id != h.Identity:
		return fmt.Errorf("the hub's identity is %s, not %s, the one the syncer started with: not removing anything from the member", id, h.Identity)
	case restoring != "":
		return fmt.Errorf("an import has been restoring the hub's objects since %s (kubectl custody hub import): not removing anything from the member before it completes", restoring)
	}
	return nil
}
