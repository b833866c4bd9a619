package location

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
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

// fieldOwner owns the status fields this controller writes.
const fieldOwner = "custody-location"

// Reconciler keeps each Location's status.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller; every Location is reconciled when a SyncTarget
// changes what the counts read, as one whose labels change can leave one Location and join
// another.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	all := enqueue.All(r.Client, func() client.ObjectList { return &schedulingv1alpha1.LocationList{} }, nil)
	return ctrl.NewControllerManagedBy(mgr).Named("location").
		For(&schedulingv1alpha1.Location{}).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(all), builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool { return countChanged(e.ObjectOld, e.ObjectNew) },
		})).
		WithOptions(opts).
		Complete(r)
}

// countChanged: a target counts in a Location by its labels, and as available by
// Available(); a hub of a thousand targets would otherwise count every Location again at each
// change of any target's status or spec.
func countChanged(oldObj, newObj client.Object) bool {
	o, n := oldObj.(*workloadv1alpha1.SyncTarget), newObj.(*workloadv1alpha1.SyncTarget)
	return o.Available() != n.Available() || !maps.Equal(o.Labels, n.Labels)
}

// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locations,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locations/status,verbs=get;patch

// Reconcile counts the Location's targets and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	loc := &schedulingv1alpha1.Location{}
	if err := r.Client.Get(ctx, req.NamespacedName, loc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	targets := &workloadv1alpha1.SyncTargetList{}
	// Read only, from the cache as it is: every Location counts every target.
	if err := r.Client.List(ctx, targets, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	want := observe(loc, targets.Items)
	cur := loc.Status
	cond := want.Conditions[0]
	if cur.Instances == want.Instances && cur.AvailableInstances == want.AvailableInstances &&
		cur.ObservedGeneration == want.ObservedGeneration && !status.Changed(cur.Conditions, cond) {
		return ctrl.Result{}, nil
	}
	want.Conditions[0] = status.Condition(cur.Conditions, cond)
	if err := status.Apply(ctx, r.Client, &schedulingv1alpha1.Location{ObjectMeta: metav1.ObjectMeta{Name: loc.Name}, Status: want}, fieldOwner); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if old := meta.FindStatusCondition(cur.Conditions, cond.Type); cond.Status == metav1.ConditionFalse && (old == nil || old.Status != cond.Status) {
		r.Recorder.Eventf(loc, nil, corev1.EventTypeWarning, cond.Reason, "Reconcile", "The instance selector does not parse: %s", cond.Message)
	}
	return ctrl.Result{}, nil
}

// observe is the part of the Location's status this controller owns: the counts of its
// targets and the SelectorValid condition. While the selector does not parse, the counts
// stay as they were.
func observe(loc *schedulingv1alpha1.Location, all []workloadv1alpha1.SyncTarget) schedulingv1alpha1.LocationStatus {
	st := schedulingv1alpha1.LocationStatus{ObservedGeneration: loc.Generation}
	cond := metav1.Condition{Type: schedulingv1alpha1.ConditionSelectorValid, ObservedGeneration: loc.Generation}
	members, err := loc.Targets(all)
	if err != nil {
		st.Instances, st.AvailableInstances = loc.Status.Instances, loc.Status.AvailableInstances
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, schedulingv1alpha1.ReasonInvalidSelector, err.Error()
		st.Conditions = []metav1.Condition{cond}
		return st
	}
	st.Instances = int32(len(members))
	for i := range members {
		if members[i].Available() {
			st.AvailableInstances++
		}
	}
	cond.Status, cond.Reason = metav1.ConditionTrue, schedulingv1alpha1.ReasonSelectorValid
	cond.Message = fmt.Sprintf("%d targets, %d available", st.Instances, st.AvailableInstances)
	st.Conditions = []metav1.Condition{cond}
	return st
}
