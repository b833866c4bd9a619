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
}

func (d *degradation) slow(delay time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.delay = delay
}

func (d *degradation) fail(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failure = msg
}

// answer waits out the delay and returns the failure, if any, as the array's answer.
func (d *degradation) answer(ctx context.Context) error {
	d.mu.Lock()
	delay, failure := d.delay, d.failure
	d.mu.Unlock()
	if delay > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	return nil
}
