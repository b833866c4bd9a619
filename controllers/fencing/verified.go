package fencing

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/fencing"
)

// verifiedFieldOwner owns the FencingVerified condition, apart from the Fenced and
// NodeCIDRsExclusive conditions.
const verifiedFieldOwner = "custody-fencing-verified"

// verified keeps each SyncTarget's FencingVerified condition: whether its node CIDRs fence
// exactly the clients its member's storage reports. It is checked when the target joins
// (its syncer's first report), on every change of spec.fencing or of the report, and read
// again by coordination before it asks for a Fence of the target.
type verified struct {
	client   client.Client
	recorder events.EventRecorder
}

// setup checks a target when it is made, when its spec changes and when its syncer reports
// other clients.
func (v *verified) setup(mgr ctrl.Manager, opts controller.Options) error {
	reportChanged := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*workloadv1alpha1.SyncTarget), e.ObjectNew.(*workloadv1alpha1.SyncTarget)
		return !equality.Semantic.DeepEqual(o.Status.FenceClients, n.Status.FenceClients)
	}}
	return ctrl.NewControllerManagedBy(mgr).Named("fencingverified").WithOptions(opts).
		For(&workloadv1alpha1.SyncTarget{}, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, reportChanged))).
		Complete(v)
}

// Reconcile writes the target's FencingVerified condition when it changed, with an event
// when it turns False, and takes it away from a target without spec.fencing.
func (v *verified) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	t := &workloadv1alpha1.SyncTarget{}
	if err := v.client.Get(ctx, req.NamespacedName, t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	c, ok := fencing.VerifiedCondition(t)
	if !ok {
		if meta.FindStatusCondition(t.Status.Conditions, workloadv1alpha1.ConditionFencingVerified) == nil {
			return ctrl.Result{}, nil
		}
		// Applying none of its fields gives the condition up.
		return ctrl.Result{}, client.IgnoreNotFound(status.Apply(ctx, v.client, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t.Name}}, verifiedFieldOwner))
	}
	if !status.Changed(t.Status.Conditions, c) {
		return ctrl.Result{}, nil
	}
	applied := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t.Name},
		Status: workloadv1alpha1.SyncTargetStatus{Conditions: []metav1.Condition{status.Condition(t.Status.Conditions, c)}}}
	if err := status.Apply(ctx, v.client, applied, verifiedFieldOwner); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	kind := corev1.EventTypeNormal
	if c.Status == metav1.ConditionFalse {
		kind = corev1.EventTypeWarning
	}
	v.recorder.Eventf(t, nil, kind, c.Reason, "VerifyFencing", "%s", c.Message)
	return ctrl.Result{}, nil
}
