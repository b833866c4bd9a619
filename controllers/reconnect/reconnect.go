package reconnect

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Retries of an unreachable server start MinDelay apart and slow down to MaxDelay.
const (
	MinDelay = 100 * time.Millisecond
	MaxDelay = time.Second
)

// refusalWindow is how long lists and watches that the server refuses as forbidden or
// unauthorized are retried before the refusal is returned: an API server that has just
// started refuses what its authorizer's caches do not hold yet.
var refusalWindow = 30 * time.Second

// Recovery ties the informers and work queues of one process together: when an informer
// reaches its server again after failing, every queued item waiting out a failure is retried
// now.
type Recovery struct {
	mu      sync.Mutex
	retries []func()
}

// New returns a Recovery with nothing attached yet.
func New() *Recovery { return &Recovery{} }

// NewInformer is a cache.Options.NewInformer whose informers list and watch through
// ListerWatcher.
func (r *Recovery) NewInformer(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
	return toolscache.NewSharedIndexInformer(r.ListerWatcher(lw), obj, resync, indexers)
}

// ListerWatcher wraps lw: a list or watch that fails because the server cannot be reached is
// retried within the caller's context, MinDelay to MaxDelay apart, and the first success
// after a failure retries the waiting items of every queue of r.
func (r *Recovery) ListerWatcher(lw toolscache.ListerWatcher) toolscache.ListerWatcher {
	return &listerWatcher{inner: toolscache.ToListerWatcherWithContext(lw), recovery: r}
}

// NewQueue is a controller.Options.NewQueue: a rate-limited queue whose items waiting out a
// failure are retried at once, with their backoff forgotten, when r sees a server again.
func (r *Recovery) NewQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	t := &tracking{TypedRateLimiter: limiter, waiting: map[reconcile.Request]struct{}{}}
	q := workqueue.NewTypedRateLimitingQueueWithConfig(t, workqueue.TypedRateLimitingQueueConfig[reconcile.Request]{Name: name})
	r.mu.Lock()
	r.retries = append(r.retries, func() {
		for _, item := range t.drain() {
			q.Add(item)
		}
	})
	r.mu.Unlock()
	return q
}

// recovered retries the waiting items of every queue.
func (r *Recovery) recovered() {
	r.mu.Lock()
	retries := r.retries
	r.mu.Unlock()
	for _, retry := range retries {
		retry()
	}
}

type listerWatcher struct {
	inner    toolscache.ListerWatcherWithContext
	recovery *Recovery
	mu       sync.Mutex
	failing  bool
}

// List and Watch, without a context to end the retries, do not retry.
func (l *listerWatcher) List(options metav1.ListOptions) (runtime.Object, error) {
	return l.inner.ListWithContext(context.Background(), options)
}

func (l *listerWatcher) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return l.inner.WatchWithContext(context.Background(), options)
}

func (l *listerWatcher) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	return retry(ctx, l, func() (runtime.Object, error) { return l.inner.ListWithContext(ctx, options) })
}

func (l *listerWatcher) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return retry(ctx, l, func() (watch.Interface, error) { return l.inner.WatchWithContext(ctx, options) })
}

// retry calls f until it succeeds, fails for another reason than an unreachable server or a
// refusal within refusalWindow, or ctx ends. The first success after a failure is a
// recovery.
func retry[T any](ctx context.Context, l *listerWatcher, f func() (T, error)) (T, error) {
	delay := MinDelay
	var refusedSince time.Time
	for {
		v, err := f()
		if err == nil {
			l.reached()
		}
		transient := Unreachable(err)
		if !transient && Refused(err) {
			if refusedSince.IsZero() {
				refusedSince = time.Now()
			}
			transient = time.Since(refusedSince) < refusalWindow
		}
		if err == nil || !transient {
			return v, err
		}
		l.mu.Lock()
		l.failing = true
		l.mu.Unlock()
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(delay):
		}
		delay = min(2*delay, MaxDelay)
	}
}

// reached notes that the server answered, and calls the recovery if it was unreachable.
func (l *listerWatcher) reached() {
	l.mu.Lock()
	recovered := l.failing
	l.failing = false
	l.mu.Unlock()
	if recovered {
		l.recovery.recovered()
	}
}

// Unreachable tells whether err says that the server could not be reached or could not
// answer yet, as while it is down or starting.
func Unreachable(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		utilnet.IsProbableEOF(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// Refused tells whether the server refused the request as forbidden or unauthorized.
func Refused(err error) bool {
	return apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err)
}

// tracking is a rate limiter that remembers the items waiting out a failure.
type tracking struct {
	workqueue.TypedRateLimiter[reconcile.Request]
	mu      sync.Mutex
	waiting map[reconcile.Request]struct{}
}

func (t *tracking) When(item reconcile.Request) time.Duration {
	t.mu.Lock()
	t.waiting[item] = struct{}{}
	t.mu.Unlock()
	return t.TypedRateLimiter.When(item)
}

func (t *tracking) Forget(item reconcile.Request) {
	t.mu.Lock()
	delete(t.waiting, item)
	t.mu.Unlock()
	t.TypedRateLimiter.Forget(item)
}

// drain forgets the waiting items and their backoff, and returns them.
func (t *tracking) drain() []reconcile.Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	items := make([]reconcile.Request, 0, len(t.waiting))
	for item := range t.waiting {
		items = append(items, item)
		t.TypedRateLimiter.Forget(item)
	}
	clear(t.waiting)
	return items
}

// Until calls condition until it holds or ctx ends: at once, then first apart, doubling up
// to most apart, for as long as it takes. wait.ExponentialBackoff would give up once its
// delay reached its cap.
func Until(ctx context.Context, first, most time.Duration, condition func(context.Context) bool) error {
	for delay := time.Duration(0); ; delay = min(max(2*delay, first), most) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		if condition(ctx) {
			return nil
		}
	}
}
