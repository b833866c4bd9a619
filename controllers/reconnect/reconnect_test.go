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

// TestRetriesTheRefusalsOfAStartingServer: a server that has just started refuses as
// forbidden what its authorizer does not know yet; the refusals are retried, and the first
// success is a recovery. A refusal that lasts is returned.
func TestRetriesTheRefusalsOfAStartingServer(t *testing.T) {
	r := New()
	q := r.NewQueue("test", workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Hour, time.Hour))
	defer q.ShutDown()
	q.AddRateLimited(reconcile.Request{NamespacedName: types.NamespacedName{Name: "waiting"}})
	forbidden := apierrors.NewForbidden(corev1.Resource("configmaps"), "", errors.New(`RBAC: clusterrole.rbac.authorization.k8s.io "syncer" not found`))
	var calls int
	lw := r.ListerWatcher(flaky(3, forbidden, &calls)).(toolscache.ListerWatcherWithContext)
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); err != nil || calls != 4 {
		t.Fatalf("three refusals then a success: err %v after %d calls", err, calls)
	}
	if q.Len() != 1 {
		t.Fatalf("queue length %d after the server answered, want the waiting item", q.Len())
	}

	defer func(w time.Duration) { refusalWindow = w }(refusalWindow)
	refusalWindow = 300 * time.Millisecond
	calls = 0
	lw = r.ListerWatcher(flaky(1000, apierrors.NewUnauthorized("no"), &calls)).(toolscache.ListerWatcherWithContext)
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !apierrors.IsUnauthorized(err) || calls < 2 || calls > 5 {
		t.Fatalf("a lasting refusal: err %v after %d calls, want it returned after the window", err, calls)
	}
}

func TestOtherErrorsAndEndedContextsReturn(t *testing.T) {
	var calls int
	lw := New().ListerWatcher(flaky(1, apierrors.NewBadRequest("no"), &calls)).(toolscache.ListerWatcherWithContext)
	if _, err := lw.ListWithContext(context.Background(), metav1.ListOptions{}); !apierrors.IsBadRequest(err) || calls != 1 {
		t.Fatalf("a bad request: err %v after %d calls, want it returned at once", err, calls)
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
