package scheduler

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Reconciler places each namespace on one target per Location.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Now is the clock of deletion annotations and of the targets' health; nil means
	// time.Now.
	Now func() time.Time
	// FenceDelay and HeartbeatGrace are coordination's (see fencing.Delay): a target that
	// stopped answering keeps its namespaces until it is lost.
	FenceDelay, HeartbeatGrace time.Duration

	// decide serialises the choices, so that each one counts the load the previous ones
	// added; the writes that follow run in parallel.
	decide  sync.Mutex
	assumed assumedPlacements
}

// targetIndex indexes the namespaces by the keys of their active targets, which the loads
// are counted from; onIndex by the keys of every target they are on, leaving or not, and
// placementIndex by the Placements bound to them: a target's change moves those namespaces.
const (
	targetIndex    = "scheduler.active-targets"
	onIndex        = "scheduler.targets"
	placementIndex = "scheduler.placements"
)

// indexes are the functions of the namespaces' indexes, by name.
var indexes = map[string]client.IndexerFunc{
	targetIndex: func(o client.Object) []string { return workloadv1alpha1.ActiveTargets(o) },
	onIndex:     func(o client.Object) []string { return workloadv1alpha1.Targets(o) },
	placementIndex: func(o client.Object) []string {
		if v := o.GetAnnotations()[schedulingv1alpha1.PlacementAnnotation]; v != "" {
			return strings.Split(v, ",")
		}
		return nil
	},
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	opts.MaxConcurrentReconciles = 4
	for name, f := range indexes {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Namespace{}, name, f); err != nil {
			return err
		}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("scheduler").
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.Or(
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Watches(&schedulingv1alpha1.Placement{}, handler.EnqueueRequestsFromMapFunc(r.boundNamespaces), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return placementChanged(e.ObjectOld, e.ObjectNew) },
		})).
		// A Location's spec says which targets it has; its status, counts the scheduler does
		// not read, changes at every cordon and would queue every placed namespace.
		Watches(&schedulingv1alpha1.Location{}, handler.EnqueueRequestsFromMapFunc(r.placedNamespaces), builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOfTarget), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return targetChanged(e.ObjectOld, e.ObjectNew) },
		})).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(namespaceOf),
			builder.WithPredicates(predicate.Funcs{
				CreateFunc: func(e event.CreateEvent) bool { return domainOf(e.Object) != "" },
				UpdateFunc: func(e event.UpdateEvent) bool {
					return domainOf(e.ObjectOld) != domainOf(e.ObjectNew) || restoreOf(e.ObjectOld) != restoreOf(e.ObjectNew)
				},
				DeleteFunc: func(e event.DeleteEvent) bool { return domainOf(e.Object) != "" },
			})).
		WithOptions(opts).
		Complete(r)
}

// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=placements;locations,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch

// Reconcile chooses the namespace's targets and writes the state labels and deletion
// annotations that follow.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ns.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	w, results, err := r.choose(ctx, ns)
	if err != nil {
		return ctrl.Result{}, err
	}
	var recheck time.Duration
	for _, res := range results {
		if res.Key == "" {
			r.Recorder.Eventf(ns, nil, corev1.EventTypeWarning, res.Reason, "Schedule", res.Message)
		}
		if res.Recheck > 0 && (recheck == 0 || res.Recheck < recheck) {
			recheck = res.Recheck
		}
	}
	if !w.Empty() {
		if err := r.write(ctx, ns, w); err != nil {
			r.assumed.forget(ns.Name)
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, nil
}

// choose decides the namespace's targets and assumes the new ones placed until the cache
// shows them.
func (r *Reconciler) choose(ctx context.Context, ns *corev1.Namespace) (Writes, []Result, error) {
	r.decide.Lock()
	defer r.decide.Unlock()
	s, err := r.observe(ctx, ns)
	if err != nil {
		return Writes{}, nil, err
	}
	desired, results := s.desiredTargets()
	w := Plan(ns, desired)
	r.assumed.add(ns.Name, w.Add)
	return w, results, nil
}

// write patches the namespace once: Sync labels for the new targets, deletion annotations
// for the ones it leaves, and stale deletion annotations cleared.
func (r *Reconciler) write(ctx context.Context, ns *corev1.Namespace, w Writes) error {
	patch := client.MergeFromWithOptions(ns.DeepCopy(), client.MergeFromWithOptimisticLock{})
	now := r.now()
	for _, k := range w.Add {
		workloadv1alpha1.SetState(ns, k, workloadv1alpha1.ResourceStateSync)
	}
	for _, k := range w.Remove {
		workloadv1alpha1.RequestRemoval(ns, k, now)
	}
	for _, k := range w.Clear {
		workloadv1alpha1.CancelRemoval(ns, k)
	}
	if err := r.Client.Patch(ctx, ns, patch); err != nil {
		return err
	}
	log := ctrl.LoggerFrom(ctx)
	for _, k := range w.Add {
		log.Info("Placed namespace", "target", k)
		r.Recorder.Eventf(ns, nil, corev1.EventTypeNormal, schedulingv1alpha1.ReasonScheduled, "Schedule", "Placed on target %s", k)
	}
	for _, k := range w.Remove {
		log.Info("Requested removal of namespace", "target", k)
		r.Recorder.Eventf(ns, nil, corev1.EventTypeNormal, schedulingv1alpha1.ReasonRemoved, "Schedule", "Removal from target %s requested", k)
	}
	return nil
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// placedNamespaces maps a change of a Location's spec, which can move any namespace, to
// every namespace bound to a Placement or on a target.
func (r *Reconciler) placedNamespaces(ctx context.Context, _ client.Object) []reconcile.Request {
	list := &corev1.NamespaceList{}
	// Read only: one change maps to every namespace of the hub.
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing namespaces")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if ns := &list.Items[i]; ns.Annotations[schedulingv1alpha1.PlacementAnnotation] != "" || len(workloadv1alpha1.ActiveTargets(ns)) > 0 {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
		}
	}
	return out
}

// namespacesOfTarget maps a change of a target to the namespaces it can move: those on it,
// and those bound to a Placement whose selected Location selects it (or has a selector that
// does not parse). A choice reads only the targets of the namespace's Locations, so a hub of
// many Locations does not queue every namespace behind each target that turns Ready or not;
// and the namespaces are found by the cache's indexes, not by reading every namespace of the
// hub at each cordon.
func (r *Reconciler) namespacesOfTarget(ctx context.Context, target client.Object) []reconcile.Request {
	locations := &schedulingv1alpha1.LocationList{}
	placements := &schedulingv1alpha1.PlacementList{}
	// Read only, as placedNamespaces.
	for _, l := range []client.ObjectList{locations, placements} {
		if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing what a target's change moves")
			return nil
		}
	}
	selecting := map[string]bool{}
	for i := range locations.Items {
		sel, err := metav1.LabelSelectorAsSelector(&locations.Items[i].Spec.InstanceSelector)
		selecting[locations.Items[i].Name] = err != nil || sel.Matches(labels.Set(target.GetLabels()))
	}
	var bound []string
	for i := range placements.Items {
		if p := &placements.Items[i]; selecting[p.Status.SelectedLocation] {
			bound = append(bound, p.Name)
		}
	}
	return append(r.namespacesBy(ctx, onIndex, workloadv1alpha1.ToSyncTargetKey(target.GetName())),
		r.namespacesBy(ctx, placementIndex, bound...)...)
}

// boundNamespaces maps a change of a Placement (its Location, its readiness, the targets it
// names) to the namespaces bound to it, the only ones it moves: a failover of one pair does
// not queue every namespace of the hub.
func (r *Reconciler) boundNamespaces(ctx context.Context, p client.Object) []reconcile.Request {
	return r.namespacesBy(ctx, placementIndex, p.GetName())
}

// namespacesBy are the namespaces the cache's index maps any of values to; one that more
// than one value maps to comes more than once, which the queue takes once.
func (r *Reconciler) namespacesBy(ctx context.Context, index string, values ...string) []reconcile.Request {
	var out []reconcile.Request
	for _, v := range values {
		namespaces := &corev1.NamespaceList{}
		// Read only, as placedNamespaces.
		if err := r.Client.List(ctx, namespaces, client.MatchingFields{index: v}, client.UnsafeDisableDeepCopy); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing the namespaces a change moves")
			return nil
		}
		for i := range namespaces.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Name: namespaces.Items[i].Name}})
		}
	}
	return out
}

func namespaceOf(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: o.GetNamespace()}}}
}

// domainOf is a claim's storage domain, the one thing of it that restricts where its
// namespace may go.
func domainOf(o client.Object) string { return o.GetAnnotations()[storagev1alpha1.DomainAnnotation] }

func restoreOf(o client.Object) string { return o.GetAnnotations()[storagev1alpha1.RestoreAnnotation] }

// placementChanged: only the selected Location and readiness move namespaces.
func placementChanged(oldObj, newObj client.Object) bool {
	o, n := oldObj.(*schedulingv1alpha1.Placement), newObj.(*schedulingv1alpha1.Placement)
	return o.Status.SelectedLocation != n.Status.SelectedLocation || o.InEffect() != n.InEffect() ||
		!slices.Equal(o.Spec.TargetNames, n.Spec.TargetNames)
}

// targetChanged: heartbeats renew status all the time; only what the filter reads counts.
func targetChanged(oldObj, newObj client.Object) bool {
	o, n := oldObj.(*workloadv1alpha1.SyncTarget), newObj.(*workloadv1alpha1.SyncTarget)
	return o.Generation != n.Generation || o.IsReady() != n.IsReady() || o.IsFenced() != n.IsFenced() || !n.DeletionTimestamp.IsZero() ||
		!maps.Equal(o.Labels, n.Labels)
}
