package location

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/scheduler"
)

// Reconciler keeps each Location's status.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager registers the controller; every Location is reconciled when a SyncTarget
// changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("location").
		For(&schedulingv1alpha1.Location{}).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(AllLocations(r.Client))).
		Complete(r)
}

// AllLocations maps any object to a request for every Location: a SyncTarget whose labels
// change can leave one Location and join another.
func AllLocations(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request {
		list := &schedulingv1alpha1.LocationList{}
		if err := c.List(ctx, list); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Listing Locations")
			return nil
		}
		out := make([]reconcile.Request, 0, len(list.Items))
		for _, l := range list.Items {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l)})
		}
		return out
	}
}

// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locations,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locations/status,verbs=get;patch

// Reconcile counts the Location's targets and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	loc := &schedulingv1alpha1.Location{}
	if err := r.Client.Get(ctx, req.NamespacedName, loc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := loc.DeepCopy()
	cond := metav1.Condition{Type: schedulingv1alpha1.ConditionSelectorValid, ObservedGeneration: loc.Generation}
	if _, err := metav1.LabelSelectorAsSelector(&loc.Spec.InstanceSelector); err != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, schedulingv1alpha1.ReasonInvalidSelector, err.Error()
	} else {
		targets := &workloadv1alpha1.SyncTargetList{}
		if err := r.Client.List(ctx, targets); err != nil {
			return ctrl.Result{}, err
		}
		members, _ := scheduler.LocationTargets(loc.Name, []schedulingv1alpha1.Location{*loc}, targets.Items)
		loc.Status.Instances, loc.Status.AvailableInstances = int32(len(members)), 0
		for i := range members {
			if available(&members[i]) {
				loc.Status.AvailableInstances++
			}
		}
		cond.Status, cond.Reason = metav1.ConditionTrue, schedulingv1alpha1.ReasonSelectorValid
		cond.Message = fmt.Sprintf("%d targets, %d available", loc.Status.Instances, loc.Status.AvailableInstances)
	}
	old := meta.FindStatusCondition(before.Status.Conditions, cond.Type)
	meta.SetStatusCondition(&loc.Status.Conditions, cond)
	if cond.Status == metav1.ConditionFalse && (old == nil || old.Status != cond.Status) {
		r.Recorder.Eventf(loc, nil, corev1.EventTypeWarning, cond.Reason, "Reconcile", "The instance selector does not parse: %s", cond.Message)
	}
	loc.Status.ObservedGeneration = loc.Generation
	if equality.Semantic.DeepEqual(before.Status, loc.Status) {
		return ctrl.Result{}, nil
	}
	// The storageclass controller writes a condition of its own to the same list, and a merge
	// patch replaces the whole list: the resourceVersion precondition makes a write that raced
	// the other writer fail with a conflict and retry on a fresh read, instead of dropping it.
	return ctrl.Result{}, r.Client.Status().Patch(ctx, loc, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// available: Ready, not cordoned, not evicting.
func available(t *workloadv1alpha1.SyncTarget) bool {
	return t.IsReady() && !t.Spec.Unschedulable && !t.Spec.Evict && t.DeletionTimestamp.IsZero()
}
