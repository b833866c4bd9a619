package simstorage

import (
	"context"
	"errors"
	"sync"
	"time"
)

// degradation is how the array answers one kind of operation while a test degrades it: late
// by delay, and failing with failure when that is not "".
type degradation struct {
	mu      sync.Mutex
	delay   time.Duration
	failure string
	// changed is closed when the delay changes: an operation under way waits out the new one,
	// counted from its start, so that a test ends a stall by lifting it.
	changed chan struct{}
}

func (d *degradation) slow(delay time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delay = delay
	if d.changed != nil {
		close(d.changed)
		d.changed = nil
	}
}

func (d *degradation) fail(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failure = msg
}

// answer waits out the delay and returns the failure, if any, as the array's answer.
func (d *degradation) answer(ctx context.Context) error {
	start := time.Now()
	for {
		d.mu.Lock()
		delay, failure := d.delay, d.failure
		if d.changed == nil {
			d.changed = make(chan struct{})
		}
		changed := d.changed
		d.mu.Unlock()
		left := time.Until(start.Add(delay))
		if left <= 0 {
			if failure != "" {
				return errors.New(failure)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-time.After(left):
		}
	}
}
