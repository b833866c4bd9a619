package syncer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	"github.com/go-logr/logr"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/custody-dev/custody/api"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/controllers/securemetrics"
	"github.com/custody-dev/custody/controllers/syncer/downsync"
	"github.com/custody-dev/custody/controllers/syncer/fence"
	"github.com/custody-dev/custody/controllers/syncer/heartbeat"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/packedcache"
	"github.com/custody-dev/custody/controllers/syncer/placedcache"
	"github.com/custody-dev/custody/controllers/syncer/replication"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/controllers/syncer/upsync"
)

// Each controller retries a failed request with a growing delay up to maxRetryDelay; when
// the hub or the member answers again after an outage, the requests waiting are retried at
// once (package reconnect).
const (
	workers       = 16
	minRetryDelay = 100 * time.Millisecond
	maxRetryDelay = 30 * time.Second
)

// Run runs the syncer until ctx ends. It waits for the hub and the member to answer first,
// then returns only when ctx ends or the syncer cannot run at all.
func Run(ctx context.Context, o Options) error {
	o, err := o.complete()
	if err != nil {
		return err
	}
	log := ctrl.Log.WithName("syncer").WithValues("syncTarget", o.SyncTargetName)
	ctx = ctrl.LoggerInto(ctx, log)
	renewer, err := o.hubCredential(ctx)
	if err != nil {
		return err
	}
	if o.HubConfig, err = reconnect.Servers(o.HubConfig, o.HubServers); err != nil {
		return err
	}
	hubID, err := hubIdentity(ctx, o.HubConfig)
	if err != nil {
		return err
	}
	if err := reachable(ctx, "member", o.MemberConfig); err != nil {
		return err
	}
	target := transform.Target{Key: workloadv1alpha1.ToSyncTargetKey(o.SyncTargetName), Hub: hubID}

	// One recovery for both clusters: whichever answers again, the work that waited for it
	// is retried at once.
	recovery := reconnect.New()
	hub, err := newHubCluster(o, target, recovery)
	if err != nil {
		return fmt.Errorf("connecting to the hub: %w", err)
	}
	mgr, err := newMemberManager(o, target, recovery, log)
	if err != nil {
		return fmt.Errorf("connecting to the member: %w", err)
	}
	if err := mgr.Add(hub); err != nil {
		return err
	}
	if renewer != nil {
		if err := mgr.Add(renewer); err != nil {
			return err
		}
	}
	kinds, err := resolve(ctx, o.Resources, hub.GetRESTMapper(), mgr.GetRESTMapper())
	if err != nil {
		return err
	}
	if err := setup(mgr, hub, o, target, kinds, recovery); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting the syncer", "key", target.Key, "hub", hubID, "resources", names(kinds))
	return mgr.Start(ctx)
}

// newHubCluster connects to the hub with a cache of only the objects labelled Sync or Upsync
// for the target, and the target's own SyncTarget. Namespaced objects are read per placed
// namespace (placedcache), where the hub grants the syncer's identity its reads. Every cache
// keeps objects as trimCached leaves them, packed (packedcache).
func newHubCluster(o Options, target transform.Target, recovery *reconnect.Recovery) (cluster.Cluster, error) {
	given, err := target.Given()
	if err != nil {
		return nil, err
	}
	return cluster.New(o.HubConfig, func(co *cluster.Options) {
		co.Scheme = api.NewScheme()
		co.NewCache = placedcache.New(placedcache.Options{
			// A pair's destination holds the replicas of namespaces not placed on it.
			Everywhere: []schema.GroupKind{storagev1alpha1.GroupVersion.WithKind("VolumeReplication").GroupKind()},
			Granted:    schema.GroupResource{Resource: "persistentvolumeclaims"},
			NewCache:   packedcache.New(cache.New),
		})
		co.Cache = cache.Options{
			NewInformer:          recovery.NewInformer,
			DefaultTransform:     trimCached,
			DefaultLabelSelector: given,
			ByObject: map[client.Object]cache.ByObject{
				&workloadv1alpha1.SyncTarget{}: {
					Label: labels.Everything(),
					Field: fields.OneTermEqualSelector("metadata.name", o.SyncTargetName),
				},
			},
		}
		co.Client = client.Options{Cache: &client.CacheOptions{Unstructured: true}}
	})
}

// newMemberManager makes the manager, on the member, with a cache of only the objects the
// syncer created, plus every PV (the member provisions some), every claim (the member makes
// some, which the upsync adopts) and every StorageClass, packed as the hub's.
func newMemberManager(o Options, target transform.Target, recovery *reconnect.Recovery, log logr.Logger) (ctrl.Manager, error) {
	scheme := api.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{csiaddonsv1alpha1.AddToScheme, volsyncv1alpha1.AddToScheme, snapshotv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return ctrl.NewManager(o.MemberConfig, ctrl.Options{
		Scheme:   scheme,
		NewCache: packedcache.New(cache.New),
		Cache: cache.Options{
			NewInformer:          recovery.NewInformer,
			DefaultTransform:     trimCached,
			DefaultLabelSelector: target.Selector(),
			ByObject: map[client.Object]cache.ByObject{
				transform.Empty(transform.PVGVK):  {Label: labels.Everything()},
				transform.Empty(transform.PVCGVK): {Label: labels.Everything()},
				&storagev1.StorageClass{}:         {Label: labels.Everything()},
			},
		},
		Client:                 client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                securemetrics.Options(o.MetricsAddr, o.MetricsCertDir, !o.InsecureMetrics),
		HealthProbeBindAddress: o.ProbeAddr,
		PprofBindAddress:       o.PprofAddr,
		// Several syncers may run in one process (tests, the local environment).
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:     log,
	})
}

// setup registers the controllers.
func setup(mgr ctrl.Manager, hub cluster.Cluster, o Options, target transform.Target, kinds []kind, recovery *reconnect.Recovery) error {
	opts := controller.Options{
		MaxConcurrentReconciles: workers,
		RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](minRetryDelay, maxRetryDelay),
		NewQueue:                recovery.NewQueue,
	}
	if err := syncio.Index(context.Background(), target, hub.GetFieldIndexer(), mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexing the caches: %w", err)
	}
	clients := syncio.Clients{
		Hub: hub.GetClient(), HubReader: hub.GetAPIReader(),
		Member: mgr.GetClient(), MemberReader: mgr.GetAPIReader(),
		SameHub: &syncio.HubCheck{Reader: hub.GetAPIReader(), Identity: target.Hub},
	}
	// A namespace also stays in the member while a VolumeReplication in it is the target's.
	contents := []schema.GroupVersionKind{storagev1alpha1.GroupVersion.WithKind("VolumeReplication")}
	for _, k := range kinds {
		if k.namespaced {
			contents = append(contents, k.gvk)
		}
	}
	for _, k := range kinds {
		r := &downsync.Reconciler{
			Clients: clients, Target: target, SyncTargetName: o.SyncTargetName, GVK: k.gvk, Contents: contents,
		}
		if err := r.SetupWithManager(mgr, hub, opts); err != nil {
			return fmt.Errorf("setting up the downsync of %s: %w", k.name, err)
		}
	}
	if has(kinds, transform.PVKind) && has(kinds, transform.PVCKind) {
		r := &upsync.Reconciler{Clients: clients, Target: target}
		if err := r.SetupWithManager(mgr, hub, opts); err != nil {
			return fmt.Errorf("setting up the upsync of PVs: %w", err)
		}
	}
	if err := setupFences(mgr, hub, opts, clients, target, o.SyncTargetName); err != nil {
		return err
	}
	if err := setupReplication(mgr, hub, opts, clients, target, o.SyncTargetName); err != nil {
		return err
	}
	reports := &heartbeat.Reports{}
	if err := mgr.Add(&heartbeat.Renewer{
		Hub: hub.GetClient(), HubReader: hub.GetAPIReader(), MemberReader: mgr.GetAPIReader(),
		SyncTargetName: o.SyncTargetName, Period: o.HeartbeatPeriod, MinRetry: minRetryDelay, Reports: reports,
	}); err != nil {
		return err
	}
	hb := &heartbeat.Reconciler{
		Hub: hub.GetClient(), MemberReader: mgr.GetAPIReader(), Member: mgr.GetClient(),
		SyncTargetName: o.SyncTargetName, Period: o.HeartbeatPeriod, SyncedResources: names(kinds), Target: target, Reports: reports,
	}
	// A failed report is retried within a period, however long the outage was.
	hbOpts := controller.Options{NewQueue: recovery.NewQueue, RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
		minRetryDelay, time.Duration(math.Max(float64(minRetryDelay), float64(o.HeartbeatPeriod))))}
	return hb.SetupWithManager(mgr, hub, hbOpts)
}

// setupFences runs the fence executor, if the member serves csi-addons NetworkFences.
func setupFences(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options, clients syncio.Clients, target transform.Target, name string) error {
	if ok, err := serves(mgr, "executing Fences", csiaddonsv1alpha1.GroupVersion.WithKind("NetworkFence")); !ok {
		return err
	}
	r := &fence.Reconciler{Clients: clients, Target: target, SyncTargetName: name}
	if err := r.SetupWithManager(mgr, hub, opts); err != nil {
		return fmt.Errorf("setting up the fence executor: %w", err)
	}
	return nil
}

// setupReplication runs the replication of LocationPairs' volumes, if the member serves
// VolSync's ReplicationSources and ReplicationDestinations.
func setupReplication(mgr ctrl.Manager, hub cluster.Cluster, opts controller.Options, clients syncio.Clients, target transform.Target, name string) error {
	if ok, err := serves(mgr, "replicating volumes", volsyncv1alpha1.GroupVersion.WithKind("ReplicationSource"),
		volsyncv1alpha1.GroupVersion.WithKind("ReplicationDestination")); !ok {
		return err
	}
	r := &replication.Reconciler{Clients: clients, Target: target, SyncTargetName: name}
	if err := r.SetupWithManager(mgr, hub, opts); err != nil {
		return fmt.Errorf("setting up the replication: %w", err)
	}
	return nil
}

// serves tells whether the member serves every kind a part of the syncer needs, and logs
// that the part does not run when it does not.
func serves(mgr ctrl.Manager, part string, kinds ...schema.GroupVersionKind) (bool, error) {
	for _, gvk := range kinds {
		if _, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			mgr.GetLogger().Info("Not "+part+": the member serves no "+gvk.Kind+"s", "group", gvk.Group)
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

// kind is one resource type the syncer syncs.
type kind struct {
	gvk        schema.GroupVersionKind
	name       string // resource.group
	namespaced bool
}

// resolve maps the resource types to kinds both the hub and the member serve, adding
// namespaces when a namespaced type is synced.
func resolve(ctx context.Context, resources []schema.GroupVersionResource, hubMapper, memberMapper meta.RESTMapper) ([]kind, error) {
	log := ctrl.LoggerFrom(ctx)
	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	var kinds []kind
	for _, gvr := range append(slices.Clone(resources), namespaces) {
		gvk, err := hubMapper.KindFor(gvr)
		if meta.IsNoMatchError(err) {
			log.Info("Not syncing a resource type the hub does not serve", "resource", gvr.GroupResource().String())
			continue
		}
		if err != nil {
			return nil, err
		}
		mapping, err := hubMapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, err
		}
		if _, err := memberMapper.RESTMapping(gvk.GroupKind(), gvk.Version); meta.IsNoMatchError(err) {
			log.Info("Not syncing a resource type the member does not serve", "resource", gvr.GroupResource().String())
			continue
		} else if err != nil {
			return nil, err
		}
		k := kind{gvk: gvk, name: mapping.Resource.GroupResource().String(), namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}
		if !slices.ContainsFunc(kinds, func(o kind) bool { return o.gvk == k.gvk }) {
			kinds = append(kinds, k)
		}
	}
	requested := slices.ContainsFunc(resources, func(gvr schema.GroupVersionResource) bool { return gvr.GroupResource() == namespaces.GroupResource() })
	if !requested && !slices.ContainsFunc(kinds, func(k kind) bool { return k.namespaced }) {
		kinds = slices.DeleteFunc(kinds, func(k kind) bool { return k.gvk.GroupKind() == transform.NamespaceKind })
	}
	return kinds, nil
}

func has(kinds []kind, gk schema.GroupKind) bool {
	return slices.ContainsFunc(kinds, func(k kind) bool { return k.gvk.GroupKind() == gk })
}

func names(kinds []kind) []string {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, k.name)
	}
	slices.Sort(out)
	return out
}

// hubIdentity reads the hub's identity (workloadv1alpha1.ReadHubIdentity), waiting for the
// hub to answer.
func hubIdentity(ctx context.Context, cfg *rest.Config) (string, error) {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return "", err
	}
	var id string
	err = waitFor(ctx, func(ctx context.Context) bool {
		read, err := workloadv1alpha1.ReadHubIdentity(ctx, c)
		if err != nil {
			ctrl.LoggerFrom(ctx).Info("Waiting for the hub", "error", err.Error())
			return false
		}
		id = read
		return true
	})
	return id, err
}

// reachable waits until the cluster answers.
func reachable(ctx context.Context, what string, cfg *rest.Config) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return waitFor(ctx, func(context.Context) bool {
		if _, err := cs.Discovery().ServerVersion(); err != nil {
			ctrl.LoggerFrom(ctx).Info("Waiting for the "+what, "error", err.Error())
			return false
		}
		return true
	})
}

// waitFor waits until a cluster answers as package reconnect paces its retries: a syncer
// that starts while the hub is down takes up its work within a second of the hub answering,
// however long it was down.
func waitFor(ctx context.Context, answers func(context.Context) bool) error {
	return reconnect.Until(ctx, reconnect.MinDelay, reconnect.MaxDelay, answers)
}
