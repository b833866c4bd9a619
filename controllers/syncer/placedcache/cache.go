package placedcache

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/custody-dev/custody/controllers/reconnect"
)

// Options say which types are read in every namespace and how a namespace's reads are known
// to be granted.
type Options struct {
	// Everywhere are the namespaced types read in every namespace, from the all-namespaces
	// cache, as the cluster-scoped ones are.
	Everywhere []schema.GroupKind
	// Granted is the resource whose list permission in a namespace tells that the hub granted
	// the identity its reads there.
	Granted schema.GroupResource
	// ReadTimeout bounds how long a read waits for a placed namespace's cache to start and
	// sync, as when the grant is late, or went with the namespace while the read waited;
	// the read then fails, and its reconcile is retried. Zero: a minute.
	ReadTimeout time.Duration
	// NewCache makes the all-namespaces cache and each namespace's. Nil: cache.New.
	NewCache cache.NewCacheFunc
}

// A newly placed namespace's cache starts once its reads are granted, which the hub's
// controller does within milliseconds of the placement, as a rule: the checks start
// minRetry apart and grow to maxRetry apart, for as long as the namespace stays placed.
const (
	minRetry = 20 * time.Millisecond
	maxRetry = 2 * time.Second
)

// grantPatience is how long a namespace may wait for its grant before the syncer says so.
const grantPatience = 10 * time.Second

// New is a cache.NewCacheFunc for cluster.Options.NewCache: opts configure every cache it
// makes, the all-namespaces one and each namespace's.
func New(o Options) cache.NewCacheFunc {
	if o.ReadTimeout == 0 {
		o.ReadTimeout = time.Minute
	}
	if o.NewCache == nil {
		o.NewCache = cache.New
	}
	return func(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
		all, err := o.NewCache(cfg, opts)
		if err != nil {
			return nil, err
		}
		access, err := authorizationclient.NewForConfigAndClient(cfg, opts.HTTPClient)
		if err != nil {
			return nil, err
		}
		// A namespace's watches are many and small: each gzip stream would hold a
		// decompressor's window of 32 KiB and more for the life of the watch.
		plain := rest.CopyConfig(cfg)
		plain.DisableCompression = true
		spaceOpts := opts
		if spaceOpts.HTTPClient, err = rest.HTTPClientFor(plain); err != nil {
			return nil, err
		}
		return &Cache{
			all: all, cfg: plain, opts: spaceOpts, o: o, access: access.SelfSubjectAccessReviews(),
			spaces: map[string]*space{}, informers: map[informerKey]*informer{},
		}, nil
	}
}

// Cache is the cache New makes.
type Cache struct {
	all cache.Cache
	// cfg and opts make each namespace's cache.
	cfg    *rest.Config
	opts   cache.Options
	o      Options
	access authorizationclient.SelfSubjectAccessReviewInterface

	// scopes memoizes, by kind, whether a type is read from the all-namespaces cache: the
	// REST mapper's answer, looked up on every read, costs more than the read itself.
	scopes sync.Map

	mu sync.Mutex
	// ctx is Start's; nil before.
	ctx       context.Context
	spaces    map[string]*space
	informers map[informerKey]*informer
	indexes   []index
}

var _ cache.Cache = &Cache{}

// space is the cache of one placed namespace. ready is closed once cache is set and started,
// once the namespace is known to hold nothing for the target (empty), or when it left before.
type space struct {
	name   string
	ready  chan struct{}
	cache  cache.Cache
	empty  bool
	cancel context.CancelFunc
}

// index is a field index to add to every namespace's cache.
type index struct {
	obj     client.Object
	field   string
	extract client.IndexerFunc
}

// Namespaces are the placed namespaces whose caches run, in order: for metrics and tests.
func (c *Cache) Namespaces() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name, s := range c.spaces {
		if s.cache != nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Start runs the all-namespaces cache and, for each namespace it shows placed, that
// namespace's cache, until ctx ends.
func (c *Cache) Start(ctx context.Context) error {
	inf, err := c.all.GetInformer(ctx, namespaceObject(), cache.BlockUntilSynced(false))
	if err != nil {
		return err
	}
	c.mu.Lock()
	c.ctx = ctx
	c.mu.Unlock()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.place(nameOf(obj)) },
		DeleteFunc: func(obj any) { c.leave(nameOf(obj)) },
	}); err != nil {
		return err
	}
	return c.all.Start(ctx)
}

func nameOf(obj any) string {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	if o, ok := obj.(metav1.Object); ok {
		return o.GetName()
	}
	return ""
}

// place starts the cache of a namespace newly placed on the target.
func (c *Cache) place(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if name != "" {
		c.placeLocked(name)
	}
}

// placeLocked returns the namespace's space, made and its cache started if there was none.
func (c *Cache) placeLocked(name string) *space {
	if s, ok := c.spaces[name]; ok {
		return s
	}
	ctx, cancel := context.WithCancel(c.ctx)
	s := &space{name: name, ready: make(chan struct{}), cancel: cancel}
	c.spaces[name] = s
	go c.run(ctx, s)
	return s
}

// space is the namespace's space, nil when the namespace is not placed. The all-namespaces
// cache tells: a namespace it shows, whose add its handler (place) was not given yet, is
// placed now. The handlers of one informer run apart, so a reconcile that the namespace's add
// brought may read before place ran, as when the syncer starts, and must not find the
// namespace empty. The namespace is read under the lock: the informer's store changes before
// its handlers run, so a namespace gone from the store is not placed again after leave.
func (c *Cache) space(ctx context.Context, name string) (*space, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.spaces[name]; ok {
		return s, nil
	}
	if err := c.all.Get(ctx, client.ObjectKey{Name: name}, namespaceObject()); apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return c.placeLocked(name), nil
}

// leave stops the cache of a namespace no longer placed on the target.
func (c *Cache) leave(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.spaces[name]
	if !ok {
		return
	}
	delete(c.spaces, name)
	s.cancel()
	for _, inf := range c.informers {
		inf.detach(name)
	}
}

// run starts a namespace's cache once its reads are granted, with every index and handler
// the other namespaces' caches have. It tries until it has, or the namespace leaves: reads
// there wait for it, and a namespace must never look empty for want of its cache.
func (c *Cache) run(ctx context.Context, s *space) {
	defer close(s.ready)
	log := ctrl.LoggerFrom(c.ctx).WithValues("namespace", s.name)
	start, told := time.Now(), false
	_ = reconnect.Until(ctx, minRetry, maxRetry, func(ctx context.Context) bool {
		granted, err := c.granted(ctx, s.name)
		if err == nil && !granted && c.terminating(ctx, s.name) {
			// The hub grants nothing in a namespace being deleted, and took what it granted
			// once the syncer let go: nothing there is the target's to read.
			log.V(1).Info("A placed namespace is being deleted without a grant: it holds nothing for the target")
			s.empty = true
			return true
		}
		if !granted {
			if !told && time.Since(start) > grantPatience {
				told = true
				log.Info("Waiting for the hub to grant the reads of a placed namespace: is the controller running?",
					"resource", c.o.Granted.String())
			}
			return false
		}
		nc, err := c.start(ctx, s)
		if err != nil {
			log.Error(err, "Starting the cache of a placed namespace")
			return false
		}
		if nc != nil {
			log.V(1).Info("Watching a placed namespace")
		}
		return true
	})
}

// start makes the namespace's cache, starts it and waits until it synced; nil when the
// namespace left.
func (c *Cache) start(ctx context.Context, s *space) (cache.Cache, error) {
	opts := c.opts
	opts.DefaultNamespaces = map[string]cache.Config{s.name: {}}
	nc, err := c.o.NewCache(c.cfg, opts)
	if err != nil {
		return nil, err
	}
	if attached, err := c.attach(ctx, s, nc); err != nil || !attached {
		return nil, err
	}
	go func() {
		if err := nc.Start(ctx); err != nil {
			ctrl.LoggerFrom(c.ctx).Error(err, "Running the cache of a placed namespace", "namespace", s.name)
		}
	}()
	// Reads wait until this returns: before the cache started they would fail, and before it
	// synced they would find it empty.
	if !nc.WaitForCacheSync(ctx) {
		return nil, nil // the namespace left
	}
	return nc, nil
}

// attach gives nc every index and handler, and makes it s's cache, unless s left.
func (c *Cache) attach(ctx context.Context, s *space, nc cache.Cache) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spaces[s.name] != s {
		return false, nil
	}
	for _, i := range c.indexes {
		if err := nc.IndexField(ctx, i.obj, i.field, i.extract); err != nil {
			return false, err
		}
	}
	for _, inf := range c.informers {
		if err := inf.attach(ctx, s.name, nc); err != nil {
			return false, err
		}
	}
	s.cache = nc
	return true, nil
}

// granted tells whether the identity may list the Granted resource in the namespace.
func (c *Cache) granted(ctx context.Context, namespace string) (bool, error) {
	review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "list", Group: c.o.Granted.Group, Resource: c.o.Granted.Resource,
		},
	}}
	answer, err := c.access.Create(ctx, review, metav1.CreateOptions{})
	if err != nil {
		return false, err
	}
	return answer.Status.Allowed, nil
}

// terminating tells whether the all-namespaces cache shows the namespace being deleted.
func (c *Cache) terminating(ctx context.Context, name string) bool {
	ns := namespaceObject()
	return c.all.Get(ctx, client.ObjectKey{Name: name}, ns) == nil && ns.GetDeletionTimestamp() != nil
}

// namespaceObject is an empty Namespace of the kind the all-namespaces cache watches them as.
func namespaceObject() *unstructured.Unstructured {
	ns := &unstructured.Unstructured{}
	ns.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "Namespace"})
	return ns
}

// everywhere tells whether the type of obj (or of a list's items) is read from the
// all-namespaces cache.
func (c *Cache) everywhere(obj runtime.Object) (schema.GroupVersionKind, bool, error) {
	gvk, err := apiutil.GVKForObject(obj, c.opts.Scheme)
	if err != nil {
		return gvk, false, err
	}
	if _, ok := obj.(client.ObjectList); ok {
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	}
	if all, ok := c.scopes.Load(gvk); ok {
		return gvk, all.(bool), nil
	}
	all := slices.Contains(c.o.Everywhere, gvk.GroupKind())
	if !all {
		namespaced, err := apiutil.IsGVKNamespaced(gvk, c.opts.Mapper)
		if err != nil {
			return gvk, false, err
		}
		all = !namespaced
	}
	c.scopes.Store(gvk, all)
	return gvk, all, nil
}

// reader is the cache of a namespace, once it started and before ctx ends; nil when the
// namespace is not placed, or holds nothing for the target.
func (c *Cache) reader(ctx context.Context, namespace string) (cache.Cache, error) {
	s, err := c.space(ctx, namespace)
	if err != nil || s == nil {
		return nil, err
	}
	select {
	case <-s.ready:
		if s.empty {
			return nil, nil
		}
		if s.cache == nil {
			return nil, fmt.Errorf("placed namespace %s left while its cache was starting", namespace)
		}
		return s.cache, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("reading in placed namespace %s: %w", namespace, ctx.Err())
	}
}

// readers are the caches of every placed namespace, each within the read timeout.
func (c *Cache) readers(ctx context.Context) ([]cache.Cache, error) {
	names, err := c.placed(ctx)
	if err != nil {
		return nil, err
	}
	var out []cache.Cache
	for _, name := range names {
		r, err := c.reader(ctx, name)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// placed are the names of the placed namespaces: those the all-namespaces cache shows,
// placed now if their adds were not handled yet (see space), and those that are leaving.
func (c *Cache) placed(ctx context.Context) ([]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "NamespaceList"})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.all.List(ctx, list); err != nil {
		return nil, err
	}
	for i := range list.Items {
		c.placeLocked(list.Items[i].GetName())
	}
	return slices.Collect(maps.Keys(c.spaces)), nil
}

// Get reads an object from the cache of its namespace; one in a namespace that is not placed
// is not found.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	gvk, all, err := c.everywhere(obj)
	if err != nil {
		return err
	}
	if all {
		return c.all.Get(ctx, key, obj, opts...)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.ReadTimeout)
	defer cancel()
	r, err := c.reader(ctx, key.Namespace)
	if err != nil {
		return err
	}
	if r == nil {
		return apierrors.NewNotFound(c.resource(gvk), key.Name)
	}
	return r.Get(ctx, key, obj, opts...)
}

func (c *Cache) resource(gvk schema.GroupVersionKind) schema.GroupResource {
	if m, err := c.opts.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
		return m.Resource.GroupResource()
	}
	return schema.GroupResource{Group: gvk.Group, Resource: strings.ToLower(gvk.Kind)}
}

// List lists from the cache of the namespace the options name, or from every placed
// namespace's.
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	_, all, err := c.everywhere(list)
	if err != nil {
		return err
	}
	if all {
		return c.all.List(ctx, list, opts...)
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.ReadTimeout)
	defer cancel()
	lo := client.ListOptions{}
	lo.ApplyOptions(opts)
	var readers []cache.Cache
	if lo.Namespace != metav1.NamespaceAll {
		r, err := c.reader(ctx, lo.Namespace)
		if err != nil {
			return err
		}
		if r != nil {
			readers = append(readers, r)
		}
	} else if readers, err = c.readers(ctx); err != nil {
		return err
	}
	return listEach(ctx, readers, list, lo)
}

// listEach lists from each reader into list, up to the options' limit.
func listEach(ctx context.Context, readers []cache.Cache, list client.ObjectList, lo client.ListOptions) error {
	var items []runtime.Object
	for _, r := range readers {
		part := list.DeepCopyObject().(client.ObjectList)
		if err := r.List(ctx, part, &lo); err != nil {
			return err
		}
		got, err := apimeta.ExtractList(part)
		if err != nil {
			return err
		}
		items = append(items, got...)
		if lo.Limit > 0 && int64(len(items)) >= lo.Limit {
			items = items[:lo.Limit]
			break
		}
	}
	return apimeta.SetList(list, items)
}

// GetInformer is the all-namespaces cache's informer for cluster-scoped and Everywhere types,
// and one informer over every placed namespace's for the others.
func (c *Cache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	_, all, err := c.everywhere(obj)
	if err != nil {
		return nil, err
	}
	if all {
		return c.all.GetInformer(ctx, obj, opts...)
	}
	return c.informer(ctx, obj)
}

// GetInformerForKind is GetInformer for a kind, typed when the scheme knows it.
func (c *Cache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	obj, err := c.opts.Scheme.New(gvk)
	if runtime.IsNotRegisteredError(err) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		obj, err = u, nil
	}
	if err != nil {
		return nil, err
	}
	return c.GetInformer(ctx, obj.(client.Object), opts...)
}

// informer is the one informer of obj's type over every placed namespace.
func (c *Cache) informer(ctx context.Context, obj client.Object) (*informer, error) {
	key, err := keyOf(obj, c.opts.Scheme)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.informers[key]; ok {
		return inf, nil
	}
	inf := &informer{proto: obj.DeepCopyObject().(client.Object), scheme: c.opts.Scheme, spaces: map[string]*fanout{}}
	for name, s := range c.spaces {
		if s.cache == nil {
			continue
		}
		if err := inf.attach(ctx, name, s.cache); err != nil {
			return nil, err
		}
	}
	c.informers[key] = inf
	return inf, nil
}

// RemoveInformer removes the informer of obj's type, in every namespace.
func (c *Cache) RemoveInformer(ctx context.Context, obj client.Object) error {
	_, all, err := c.everywhere(obj)
	if err != nil || all {
		return errorOr(err, func() error { return c.all.RemoveInformer(ctx, obj) })
	}
	key, err := keyOf(obj, c.opts.Scheme)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.informers, key)
	for _, s := range c.spaces {
		if s.cache != nil {
			if err := s.cache.RemoveInformer(ctx, obj); err != nil {
				return err
			}
		}
	}
	return nil
}

func errorOr(err error, f func() error) error {
	if err != nil {
		return err
	}
	return f()
}

// WaitForCacheSync waits for the all-namespaces cache only: a namespace's objects reach the
// handlers as its informers list them, and reads there wait for them. A namespace whose
// grant is late or gone must not hold the whole syncer back.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return c.all.WaitForCacheSync(ctx)
}

// IndexField adds the index to the all-namespaces cache, or to every namespace's cache, now
// and as namespaces are placed.
func (c *Cache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	_, all, err := c.everywhere(obj)
	if err != nil || all {
		return errorOr(err, func() error { return c.all.IndexField(ctx, obj, field, extract) })
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.indexes = append(c.indexes, index{obj: obj, field: field, extract: extract})
	for _, s := range c.spaces {
		if s.cache != nil {
			if err := s.cache.IndexField(ctx, obj, field, extract); err != nil {
				return err
			}
		}
	}
	return nil
}
