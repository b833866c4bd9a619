package health

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/leases"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/fencing"
)

// fieldOwner owns the status fields this controller writes.
const fieldOwner = "custody-health"

// Reconciler sets each SyncTarget's Ready condition from its heartbeat Lease.
type Reconciler struct {
	Client client.Client
	// Recorder emits an event on every change of Ready. Nil: the manager's recorder.
	Recorder events.EventRecorder
	// Grace is how long a Lease may go unrenewed before its target is Unreachable. Zero:
	// three times the period the syncer announces in the Lease's leaseDurationSeconds.
	Grace time.Duration
	// Reader asks the hub's API server, past the cache, whether it answers. Nil: the
	// manager's API reader.
	Reader client.Reader
	// ContactInterval is how often it asks. Zero: DefaultContactInterval, or a third of the
	// Grace when that is shorter.
	ContactInterval time.Duration

	states  *targetStates
	contact *contact
}

// +kubebuilder:rbac:groups=workload.custody.dev,resources=synctargets,verbs=get;list;watch
// +kubebuilder:rbac:groups=workload.custody.dev,resources=synctargets/status,verbs=get;patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler with the hub's manager.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	states, err := newTargetStates(mgr)
	if err != nil {
		return err
	}
	r.states, r.contact = states, &contact{}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("custody-health")
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if r.ContactInterval == 0 {
		// Often enough to see an outage of the hub shorter than the grace.
		r.ContactInterval = DefaultContactInterval
		if r.Grace > 0 {
			r.ContactInterval = min(DefaultContactInterval, r.Grace/3)
		}
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		return r.contact.watch(ctx, r.Reader, r.ContactInterval)
	})); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("health").
		For(&workloadv1alpha1.SyncTarget{}).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(targetOf), builder.WithPredicates(leases.Heartbeats)).
		WithOptions(opts).
		Complete(r)
}

// targetOf maps a heartbeat Lease to the SyncTarget of the same name.
func targetOf(_ context.Context, lease client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: lease.GetName()}}}
}

// Reconcile sets one SyncTarget's health and comes back when its grace period runs out.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	st := &workloadv1alpha1.SyncTarget{}
	if err := r.Client.Get(ctx, req.NamespacedName, st); err != nil {
		if apierrors.IsNotFound(err) {
			r.states.set(req.Name, "")
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	since, asked := r.contact.Since()
	if !asked {
		// The hub is judged before its targets: a Lease may be old because the hub was down.
		return ctrl.Result{RequeueAfter: r.ContactInterval}, nil
	}
	lease, err := leases.Of(ctx, r.Client, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	ready := meta.IsStatusConditionTrue(st.Status.Conditions, workloadv1alpha1.ConditionReady)
	seen := ready || !st.UnreachableSince().IsZero()
	v := r.evaluate(lease, ready, seen, since, time.Now())
	if ready && v.status != metav1.ConditionTrue {
		// After an outage the cache may hold a Lease older than the hub's: a target turns
		// Unreachable only on the hub's own.
		if lease, err = leases.Of(ctx, r.Reader, req.Name); err != nil {
			return ctrl.Result{}, err
		}
		v = r.evaluate(lease, ready, seen, since, time.Now())
	}
	if err := r.writeStatus(ctx, st, v); err != nil {
		return ctrl.Result{}, err
	}
	state := v.reason
	if v.status == metav1.ConditionTrue {
		state = readyState
	}
	r.states.set(req.Name, state)
	return ctrl.Result{RequeueAfter: v.recheck}, nil
}

// verdict is the health of a target at one moment.
type verdict struct {
	status  metav1.ConditionStatus
	reason  string
	message string
	// recheck is when the verdict would change without any event; zero: never.
	recheck time.Duration
}

// evaluate judges a target from its Lease (nil: none), whether it is Ready now, whether it
// heartbeat before (seen), and since when the hub's API server answers the controller
// (zero: it does not). A Ready target's Lease may be renewed late by as long as the hub did
// not answer: it stays Ready until the grace ran out from the moment the hub answered again.
// A target seen before whose Lease is gone is Unreachable.
func (r *Reconciler) evaluate(lease *coordinationv1.Lease, ready, seen bool, contact, now time.Time) verdict {
	if lease == nil || lease.Spec.RenewTime == nil {
		if seen {
			return verdict{status: metav1.ConditionFalse, reason: workloadv1alpha1.ReasonUnreachable,
				message: "The target's heartbeat Lease is gone"}
		}
		return verdict{status: metav1.ConditionFalse, reason: workloadv1alpha1.ReasonNeverSeen,
			message: "No syncer has renewed a heartbeat Lease for the target"}
	}
	renewed := lease.Spec.RenewTime.Time
	grace := r.grace(lease)
	if age := now.Sub(renewed); age < grace {
		return verdict{status: metav1.ConditionTrue, reason: workloadv1alpha1.ReasonHeartbeating,
			message: "The syncer renews its heartbeat Lease", recheck: grace - age}
	}
	if ready && contact.IsZero() {
		return verdict{status: metav1.ConditionTrue, reason: workloadv1alpha1.ReasonHeartbeating, recheck: grace,
			message: "The hub's API server does not answer, so the syncer cannot renew its heartbeat Lease; it is judged once the hub answers"}
	}
	if since := now.Sub(contact); ready && since < grace {
		return verdict{status: metav1.ConditionTrue, reason: workloadv1alpha1.ReasonHeartbeating, recheck: grace - since,
			message: fmt.Sprintf("The hub's API server answers again since %s; the syncer has until %s to renew its heartbeat Lease",
				contact.UTC().Format(time.RFC3339), contact.Add(grace).UTC().Format(time.RFC3339))}
	}
	return verdict{status: metav1.ConditionFalse, reason: workloadv1alpha1.ReasonUnreachable,
		message: fmt.Sprintf("The heartbeat Lease was last renewed at %s, more than %s ago", renewed.UTC().Format(time.RFC3339), grace)}
}

// grace is the configured grace, else three renewal periods of the Lease.
func (r *Reconciler) grace(lease *coordinationv1.Lease) time.Duration {
	return fencing.Grace(r.Grace, lease)
}

// writeStatus applies the key and Ready when they changed, and emits an event when Ready
// changed: a heartbeat alone writes nothing. The syncer writes other fields of the same
// status under a field manager of its own.
func (r *Reconciler) writeStatus(ctx context.Context, st *workloadv1alpha1.SyncTarget, v verdict) error {
	cond := metav1.Condition{
		Type: workloadv1alpha1.ConditionReady, Status: v.status, Reason: v.reason, Message: v.message,
		ObservedGeneration: st.Generation,
	}
	key := workloadv1alpha1.ToSyncTargetKey(st.Name)
	if st.Status.Key == key && !status.Changed(st.Status.Conditions, cond) {
		return nil
	}
	applied := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: st.Name}}
	applied.Status.Key = key
	applied.Status.Conditions = []metav1.Condition{status.Condition(st.Status.Conditions, cond)}
	if err := status.Apply(ctx, r.Client, applied, fieldOwner); err != nil {
		return err
	}
	if before := meta.FindStatusCondition(st.Status.Conditions, cond.Type); before == nil || before.Status != v.status || before.Reason != v.reason {
		eventType := corev1.EventTypeNormal
		if v.status != metav1.ConditionTrue {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(st, nil, eventType, v.reason, "CheckHeartbeat", v.message)
		ctrl.LoggerFrom(ctx).Info("Target health changed", "ready", v.status, "reason", v.reason)
	}
	return nil
}
