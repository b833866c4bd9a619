package reconnect

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestUntilOutlastsItsCap: the condition is called for as long as it takes, long after the
// delay reached its cap, and no more once ctx ends.
func TestUntilOutlastsItsCap(t *testing.T) {
	calls := 0
	err := Until(context.Background(), time.Millisecond, 2*time.Millisecond, func(context.Context) bool {
		calls++
		return calls == 20
	})
	if err != nil || calls != 20 {
		t.Errorf("Until = %v after %d calls, want nil after 20", err, calls)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = Until(ctx, time.Millisecond, 2*time.Millisecond, func(context.Context) bool { return false })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Until = %v when ctx ended, want %v", err, context.DeadlineExceeded)
	}
}
