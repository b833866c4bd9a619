package syncer

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/custody-dev/custody/controllers/syncer/placedcache"
	"github.com/custody-dev/custody/test/testbed"
)

// seen records the names of the ConfigMaps a handler was given.
type seen struct {
	mu    sync.Mutex
	names map[string]bool
}

var _ toolscache.ResourceEventHandler = &seen{}

func (s *seen) OnAdd(obj any, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[obj.(*corev1.ConfigMap).Name] = true
}
func (s *seen) OnUpdate(_, obj any) { s.OnAdd(obj, false) }
func (s *seen) OnDelete(any)        {}

func (s *seen) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[name]
}

var _ = Describe("The cache of placed namespaces", func() {
	It("reads and watches a namespace once it is placed and granted, and no more once it leaves", func(ctx SpecContext) {
		const label = "placed"
		selected := labels.SelectorFromSet(labels.Set{label: "yes"})
		user := "placedcache-" + rand.String(5)
		cfg, err := bed.Hub.UserConfig(user)
		Expect(err).NotTo(HaveOccurred())
		// Cluster-wide, the identity reads only namespaces, as custody-syncer-hub lets a syncer.
		grant(ctx, "", user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})

		c := newPlacedCache(cfg, selected)
		cacheCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() { _ = c.Start(cacheCtx) }()
		early := &seen{names: map[string]bool{}}
		inf, err := c.GetInformer(ctx, &corev1.ConfigMap{})
		Expect(err).NotTo(HaveOccurred())
		_, err = inf.AddEventHandler(early)
		Expect(err).NotTo(HaveOccurred())

		placed, other := "placed-"+rand.String(5), "other-"+rand.String(5)
		for ns, labels := range map[string]map[string]string{placed: {label: "yes"}, other: nil} {
			Expect(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}})).To(Succeed())
			Expect(bed.Hub.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: map[string]string{label: "yes"}}})).To(Succeed())
		}

		By("reading in a placed namespace before its grant: the read waits")
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		Expect(c.Get(short, client.ObjectKey{Namespace: placed, Name: "settings"}, &corev1.ConfigMap{})).NotTo(Succeed())
		Expect(early.has("settings")).To(BeFalse())

		By("granting it: the handler is given its objects, and reads find them")
		grant(ctx, placed, user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}})
		Eventually(early.has).WithArguments("settings").Should(BeTrue())
		Expect(c.Get(ctx, client.ObjectKey{Namespace: placed, Name: "settings"}, &corev1.ConfigMap{})).To(Succeed())
		Expect(c.Namespaces()).To(Equal([]string{placed}))
		list := &corev1.ConfigMapList{}
		Expect(c.List(ctx, list)).To(Succeed())
		Expect(list.Items).To(HaveLen(1))

		By("adding a handler once the namespace's informer runs: it is given the objects there")
		late := &seen{names: map[string]bool{}}
		_, err = inf.AddEventHandler(late)
		Expect(err).NotTo(HaveOccurred())
		Eventually(late.has).WithArguments("settings").Should(BeTrue())

		By("reading in a namespace not placed: nothing is there, at once")
		err = c.Get(ctx, client.ObjectKey{Namespace: other, Name: "settings"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want not found, got %v", err)

		By("taking the namespace's placement away: its cache stops, and reads there find nothing")
		Expect(bed.Hub.Client.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placed}},
			client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"placed":null}}}`)))).To(Succeed())
		Eventually(c.Namespaces).Should(BeEmpty())
		err = c.Get(ctx, client.ObjectKey{Namespace: placed, Name: "settings"}, &corev1.ConfigMap{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want not found, got %v", err)
	})

	It("finds what a placed namespace holds from its first add, before the cache's own handler placed it", func(ctx SpecContext) {
		const label = "placed"
		user := "placedcache-" + rand.String(5)
		cfg, err := bed.Hub.UserConfig(user)
		Expect(err).NotTo(HaveOccurred())
		grant(ctx, "", user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})
		placed := "started-" + rand.String(5)
		Expect(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placed, Labels: map[string]string{label: "yes"}}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(bed.Hub.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placed}})).To(Succeed())
		})
		Expect(bed.Hub.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: placed, Name: "settings", Labels: map[string]string{label: "yes"}}})).To(Succeed())
		grant(ctx, placed, user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps", "persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch"}})

		// A syncer's reconcile of the namespace, as its add brings it: the handler reads there
		// at once, as the namespace's removal does to know what the namespace still holds.
		c := newPlacedCache(cfg, labels.SelectorFromSet(labels.Set{label: "yes"}))
		inf, err := c.GetInformer(ctx, &corev1.Namespace{}, cache.BlockUntilSynced(false))
		Expect(err).NotTo(HaveOccurred())
		found := make(chan int, 1)
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			if obj.(*corev1.Namespace).Name != placed {
				return
			}
			list := &corev1.ConfigMapList{}
			if err := c.List(ctx, list, client.InNamespace(placed)); err != nil {
				GinkgoWriter.Printf("listing in %s: %v\n", placed, err)
			}
			found <- len(list.Items)
		}})
		Expect(err).NotTo(HaveOccurred())
		cacheCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() { _ = c.Start(cacheCtx) }()
		Eventually(found).Should(Receive(Equal(1)), "the namespace's ConfigMap, read as the namespace came")
		Expect(c.Namespaces()).To(Equal([]string{placed}))
	})

	It("finds nothing at once in a placed namespace being deleted before its grant came", func(ctx SpecContext) {
		const label = "placed"
		user := "placedcache-" + rand.String(5)
		cfg, err := bed.Hub.UserConfig(user)
		Expect(err).NotTo(HaveOccurred())
		grant(ctx, "", user, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "list", "watch"}})
		c := newPlacedCache(cfg, labels.SelectorFromSet(labels.Set{label: "yes"}))
		cacheCtx, stop := context.WithCancel(ctx)
		DeferCleanup(stop)
		go func() { _ = c.Start(cacheCtx) }()

		// The hub grants nothing in a namespace being deleted: a namespace placed just before
		// its deletion never gets its grant. The finalizer holds it in its deletion.
		const hold = "test.custody.dev/hold"
		placed := "deleted-" + rand.String(5)
		Expect(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: placed, Labels: map[string]string{label: "yes"}, Finalizers: []string{hold},
		}})).To(Succeed())
		DeferCleanup(func(ctx SpecContext) {
			Expect(bed.Hub.Client.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placed}},
				client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
		})
		Expect(bed.Hub.Client.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: placed, Name: "settings"}})).To(Succeed())
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		Expect(c.Get(short, client.ObjectKey{Namespace: placed, Name: "settings"}, &corev1.ConfigMap{})).NotTo(Succeed(), "the read waits for the grant")

		By("deleting the namespace: reads there find nothing, well within the read timeout")
		Expect(bed.Hub.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: placed}})).To(Succeed())
		Eventually(func(g Gomega) {
			read, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			err := c.Get(read, client.ObjectKey{Namespace: placed, Name: "settings"}, &corev1.ConfigMap{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "want not found, got %v", err)
		}).Should(Succeed())
		list := &corev1.ConfigMapList{}
		Expect(c.List(ctx, list)).To(Succeed())
		Expect(list.Items).To(BeEmpty())
		Expect(c.Namespaces()).To(BeEmpty())
	})
})

// newPlacedCache is the syncer's kind of hub cache, as cfg, of the objects selected.
func newPlacedCache(cfg *rest.Config, selected labels.Selector) *placedcache.Cache {
	GinkgoHelper()
	httpClient, err := rest.HTTPClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	Expect(err).NotTo(HaveOccurred())
	c, err := placedcache.New(placedcache.Options{Granted: schema.GroupResource{Resource: "persistentvolumeclaims"}})(cfg, cache.Options{
		HTTPClient: httpClient, Scheme: testbed.Scheme(), Mapper: mapper, DefaultLabelSelector: selected,
	})
	Expect(err).NotTo(HaveOccurred())
	return c.(*placedcache.Cache)
}

// grant gives the user the rule in the namespace, or cluster-wide when it is empty.
func grant(ctx context.Context, namespace, user string, rule rbacv1.PolicyRule) {
	GinkgoHelper()
	name := user + "-" + rand.String(4)
	subjects := []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}
	if namespace == "" {
		Expect(bed.Hub.Client.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}})).To(Succeed())
		Expect(bed.Hub.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		})).To(Succeed())
		return
	}
	Expect(bed.Hub.Client.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Rules: []rbacv1.PolicyRule{rule}})).To(Succeed())
	Expect(bed.Hub.Client.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
	})).To(Succeed())
}
