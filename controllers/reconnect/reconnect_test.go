package reconnect

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// flaky fails its first calls with err.
func flaky(failures int, err error, calls *int) toolscache.ListerWatcher {
	return &toolscache.ListWatch{
		ListWithContextFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			*calls++
			if *calls <= failures {
				return nil, err
			}
			return &corev1.ConfigMapList{}, nil
		},
		WatchFuncWithContext: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return watch.NewFake(), nil
		},
	}
}

func TestRetriesAnUnreachableServerAndRequeuesTheWaiting(t *testing.T) {
	r := New()
	q := r.NewQueue("test", workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Hour, time.Hour))
	defer q.ShutDown()
	item := reconcile.Request{NamespacedName: types.NamespacedName{Name: "waiting"}}
	q.AddRateLimited(item) // waits an hour, unless the server comes back

	var calls int
	refused := &dialError{syscall.ECONNREFUSED}
	lw := r.ListerWatcher(flaky(3, refused, &calls)).(toolscache.ListerWatcherWithContext)
	start := time.Now()
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	if calls != 4 {
		t.Fatalf("calls: %d, want 3 failures and a success", calls)
	}
	// 100ms, 200ms, 400ms apart.
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("three retries took %s", took)
	}
	if q.Len() != 1 {
		t.Fatalf("queue length %d after the server answered again, want the waiting item", q.Len())
	}
	if got, _ := q.Get(); got != item {
		t.Fatalf("got %v", got)
	}
}

func TestOtherErrorsAndEndedContextsReturn(t *testing.T) {
	var calls int
	lw := New().ListerWatcher(flaky(1, apierrors.NewForbidden(corev1.Resource("configmaps"), "", errors.New("no")), &calls)).(toolscache.ListerWatcherWithContext)
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !apierrors.IsForbidden(err) || calls != 1 {
		t.Fatalf("a refusal by the server: err %v after %d calls, want it returned at once", err, calls)
	}
	calls = 0
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	lw = New().ListerWatcher(flaky(1000, &dialError{syscall.ECONNREFUSED}, &calls)).(toolscache.ListerWatcherWithContext)
	if _, err := lw.ListWithContext(ctx, metav1.ListOptions{}); err == nil || ctx.Err() == nil {
		t.Fatalf("an unreachable server past the context: err %v", err)
	}
}

// dialError is a dial error, as the client returns for a server that is down.
type dialError struct{ errno syscall.Errno }

func (e *dialError) Error() string   { return "dial tcp 127.0.0.1:6443: " + e.errno.Error() }
func (e *dialError) Timeout() bool   { return false }
func (e *dialError) Temporary() bool { return false }
func (e *dialError) Unwrap() error   { return e.errno }
