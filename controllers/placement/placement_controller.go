package placement

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/internal/status"
)

// fieldOwner owns the Placement's status.
const fieldOwner = "custody-placement"

// Reconciler selects a Location for each Placement and binds its namespaces.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller. Placements are reconciled when they change,
// and all of them when a Location comes, goes or changes its spec or labels, a LocationPair
// changes, a SyncTarget comes, goes or changes its labels or restriction, or a namespace's
// labels change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	all := handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, func() client.ObjectList { return &schedulingv1alpha1.PlacementList{} }, nil))
	return ctrl.NewControllerManagedBy(mgr).Named("placement").
		For(&schedulingv1alpha1.Placement{}).
		// A Location's spec and labels decide which Placements select it; its status counts
		// only break a tie when a Placement first selects one, which it keeps, and change at
		// every cordon.
		Watches(&schedulingv1alpha1.Location{}, all, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&schedulingv1alpha1.LocationPair{}, all).
		Watches(&workloadv1alpha1.SyncTarget{}, all, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return selectionChanged(e.ObjectOld, e.ObjectNew) },
		})).
		Watches(&corev1.Namespace{}, all, builder.WithPredicates(userLabelsChanged)).
		WithOptions(opts).
		Complete(r)
}

// selectionChanged: of a target, a Placement reads its name (targetNames), its labels (the
// Locations that select it) and whether it is restricted; its other changes, a cordon or a
// heartbeat's, would read every namespace of the hub once for each Placement.
func selectionChanged(oldObj, newObj client.Object) bool {
	o, n := oldObj.(*workloadv1alpha1.SyncTarget), newObj.(*workloadv1alpha1.SyncTarget)
	return o.Spec.Restricted != n.Spec.Restricted || !maps.Equal(o.Labels, n.Labels)
}

// userLabelsChanged passes namespace events that can change what a namespace selector
// matches: creation, deletion, and label changes other than the state labels Custody writes.
var userLabelsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return !maps.Equal(userLabels(e.ObjectOld.GetLabels()), userLabels(e.ObjectNew.GetLabels()))
	},
}

func userLabels(l map[string]string) map[string]string {
	l = maps.Clone(l)
	maps.DeleteFunc(l, func(k, _ string) bool { return workloadv1alpha1.IsStateLabel(k) })
	return l
}

// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=placements,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=placements/status,verbs=get;patch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=placements/finalizers,verbs=update
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locations,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locationpairs,verbs=get;list;watch
// +kubebuilder:rbac:groups=workload.custody.dev,resources=synctargets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile selects the Placement's Location, binds its namespaces and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	p := &schedulingv1alpha1.Placement{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, p)
	}
	if controllerutil.AddFinalizer(p, schedulingv1alpha1.PlacementFinalizer) {
		return ctrl.Result{}, r.Client.Update(ctx, p)
	}

	o, err := r.observe(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	out := decide(o)
	before := p.DeepCopy()
	defer func() {
		if retErr == nil {
			retErr = r.writeStatus(ctx, before, p, out)
		}
	}()
	if out.keepBindings {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.bind(ctx, p.Name, o.namespaces, out.namespaces)
}

func (r *Reconciler) observe(ctx context.Context, p *schedulingv1alpha1.Placement) (observed, error) {
	o := observed{placement: p}
	locations := &schedulingv1alpha1.LocationList{}
	targets := &workloadv1alpha1.SyncTargetList{}
	namespaces := &corev1.NamespaceList{}
	pairs := &schedulingv1alpha1.LocationPairList{}
	for _, l := range []client.ObjectList{locations, targets, namespaces, pairs} {
		if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return o, err
		}
	}
	o.locations, o.targets, o.pairs = locations.Items, targets.Items, pairs.Items
	for _, ns := range namespaces.Items {
		if ns.DeletionTimestamp.IsZero() {
			o.namespaces = append(o.namespaces, namespaceLabels{name: ns.Name, labels: labels.Set(ns.Labels), placements: boundPlacements(&ns)})
		}
	}
	return o, nil
}

// bindParallelism bounds the namespace patches in flight for one Placement.
const bindParallelism = 8

// bind makes exactly the wanted namespaces list the Placement in their annotation.
func (r *Reconciler) bind(ctx context.Context, name string, namespaces []namespaceLabels, wanted []string) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(bindParallelism)
	wantedSet := sets.New(wanted...)
	for _, ns := range namespaces {
		want := wantedSet.Has(ns.name)
		if slices.Contains(ns.placements, name) == want {
			continue
		}
		g.Go(func() error { return r.setBinding(ctx, ns.name, name, want) })
	}
	return g.Wait()
}

// setBinding adds the Placement to, or removes it from, one namespace's annotation.
func (r *Reconciler) setBinding(ctx context.Context, namespace, placement string, bound bool) error {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	names := slices.DeleteFunc(boundPlacements(ns), func(n string) bool { return n == placement })
	if bound {
		names = append(names, placement)
	}
	sort.Strings(names)
	patch := client.MergeFromWithOptions(ns.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if len(names) == 0 {
		delete(ns.Annotations, schedulingv1alpha1.PlacementAnnotation)
	} else {
		metav1.SetMetaDataAnnotation(&ns.ObjectMeta, schedulingv1alpha1.PlacementAnnotation, strings.Join(names, ","))
	}
	if err := r.Client.Patch(ctx, ns, patch); err != nil {
		return err
	}
	ctrl.LoggerFrom(ctx).Info("Updated namespace binding", "namespace", namespace, "bound", bound)
	return nil
}

// finalize unbinds every namespace, then lets the Placement go.
func (r *Reconciler) finalize(ctx context.Context, p *schedulingv1alpha1.Placement) error {
	o, err := r.observe(ctx, p)
	if err != nil {
		return err
	}
	if err := r.bind(ctx, p.Name, o.namespaces, nil); err != nil {
		return err
	}
	if controllerutil.RemoveFinalizer(p, schedulingv1alpha1.PlacementFinalizer) {
		return r.Client.Update(ctx, p)
	}
	return nil
}

// writeStatus sets the phase and conditions, emits an event for each condition that
// changed, and patches the status once.
func (r *Reconciler) writeStatus(ctx context.Context, before, p *schedulingv1alpha1.Placement, out outcome) error {
	if !out.keepBindings {
		p.Status.SelectedLocation = out.location
		p.Status.Phase = phase(out)
		p.Status.ObservedGeneration = p.Generation
	}
	for _, c := range out.conditions {
		c.ObservedGeneration = p.Generation
		old := meta.FindStatusCondition(before.Status.Conditions, c.Type)
		if meta.SetStatusCondition(&p.Status.Conditions, c) && (old == nil || old.Status != c.Status || old.Reason != c.Reason) {
			eventType := corev1.EventTypeNormal
			if c.Status != metav1.ConditionTrue {
				eventType = corev1.EventTypeWarning
			}
			r.Recorder.Eventf(p, nil, eventType, c.Reason, "Reconcile", "%s: %s", c.Type, c.Message)
		}
	}
	if equality.Semantic.DeepEqual(before.Status, p.Status) {
		return nil
	}
	return status.Apply(ctx, r.Client, &schedulingv1alpha1.Placement{ObjectMeta: metav1.ObjectMeta{Name: p.Name}, Status: p.Status}, fieldOwner)
}

// boundPlacements returns the Placements a namespace's annotation lists.
func boundPlacements(ns *corev1.Namespace) []string {
	v := ns.Annotations[schedulingv1alpha1.PlacementAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// phase is Pending without a Location, Unbound with one but no namespace, Bound otherwise.
func phase(out outcome) schedulingv1alpha1.PlacementPhase {
	switch {
	case out.location == "":
		return schedulingv1alpha1.PlacementPending
	case len(out.namespaces) == 0:
		return schedulingv1alpha1.PlacementUnbound
	}
	return schedulingv1alpha1.PlacementBound
}
