package storageclass

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/internal/status"
)

// fieldOwner owns the condition this controller writes.
const fieldOwner = "custody-storageclass"

// Reconciler keeps each Location's StorageClassesCompatible condition.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named("storageclass").
		For(&schedulingv1alpha1.Location{}, builder.WithPredicates(predicate.Or[client.Object](
			predicate.GenerationChangedPredicate{}, conditionChanged))).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(
			enqueue.All(r.Client, func() client.ObjectList { return &schedulingv1alpha1.LocationList{} }, nil)),
			builder.WithPredicates(reportChanged)).
		WithOptions(opts).
		Complete(r)
}

// reportChanged passes the SyncTarget updates that can change a comparison: labels (the
// target joins or leaves Locations), reported classes, the first report, and the start of
// deletion.
var reportChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*workloadv1alpha1.SyncTarget), e.ObjectNew.(*workloadv1alpha1.SyncTarget)
		return !maps.Equal(o.Labels, n.Labels) || o.DeletionTimestamp.IsZero() != n.DeletionTimestamp.IsZero() ||
			o.Reported() != n.Reported() || !equality.Semantic.DeepEqual(o.Status.StorageClasses, n.Status.StorageClasses)
	},
}

// conditionChanged passes the Location updates that change the condition this controller
// keeps: whoever else writes the status and drops or rewrites it gets it recomputed.
var conditionChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*schedulingv1alpha1.Location), e.ObjectNew.(*schedulingv1alpha1.Location)
		typ := schedulingv1alpha1.ConditionStorageClassesCompatible
		return !equality.Semantic.DeepEqual(meta.FindStatusCondition(o.Status.Conditions, typ), meta.FindStatusCondition(n.Status.Conditions, typ))
	},
}

// Reconcile compares the classes of the Location's targets, writes the condition, and
// records an event when the change calls for one.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	loc := &schedulingv1alpha1.Location{}
	if err := r.Client.Get(ctx, req.NamespacedName, loc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	targets := &workloadv1alpha1.SyncTargetList{}
	if err := r.Client.List(ctx, targets); err != nil {
		return ctrl.Result{}, err
	}
	cond := condition(loc, targets.Items)
	if !status.Changed(loc.Status.Conditions, cond) {
		return ctrl.Result{}, nil
	}
	// The location controller writes other fields of the same status: see its package.
	applied := &schedulingv1alpha1.Location{ObjectMeta: metav1.ObjectMeta{Name: loc.Name}}
	applied.Status.Conditions = []metav1.Condition{status.Condition(loc.Status.Conditions, cond)}
	if err := status.Apply(ctx, r.Client, applied, fieldOwner); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if e, ok := eventFor(meta.FindStatusCondition(loc.Status.Conditions, cond.Type), cond); ok {
		r.Recorder.Eventf(loc, nil, e.eventType, cond.Reason, "Compare", "%s", e.note)
	}
	return ctrl.Result{}, nil
}
