package fencing

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/fencing"
)

// cidrsFieldOwner owns the NodeCIDRsExclusive condition, and verifiedFieldOwner the
// FencingVerified condition, apart from fieldOwner's Fenced condition: applying one leaves
// the others be.
const (
	cidrsFieldOwner    = "custody-fencing-cidrs"
	verifiedFieldOwner = "custody-fencing-verified"
)

// nodeCIDRs keeps every SyncTarget's NodeCIDRsExclusive condition: whether a Fence of it,
// which cuts off its node CIDRs in a storage domain, would cut off another target of that
// domain too. The CRD refuses what one target's CIDRs say alone (not a CIDR, /0); an
// overlap between two targets is only seen here, with both in hand. It keeps their
// FencingVerified condition too: whether the node CIDRs fence exactly the clients the
// member's storage reports, checked when the target joins (its syncer's first report) and on
// every change of spec.fencing or of the report; coordination checks it again before it
// asks for a Fence of the target.
type nodeCIDRs struct {
	client   client.Client
	recorder events.EventRecorder
}

// everyTarget is the one request of the check: an overlap is two targets' to tell, so each
// reconcile judges every target from one list of them, and the events of many targets (a
// start, a thousand members joining) queue it once.
var everyTarget = []reconcile.Request{{NamespacedName: types.NamespacedName{Name: "every-synctarget"}}}

// setup checks the targets whenever one is made, deleted or changes its spec, or its syncer
// reports other clients of its storage.
func (n *nodeCIDRs) setup(mgr ctrl.Manager, opts controller.Options) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request { return everyTarget })
	reported := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.(*workloadv1alpha1.SyncTarget), e.ObjectNew.(*workloadv1alpha1.SyncTarget)
		return !equality.Semantic.DeepEqual(o.Status.FenceClients, n.Status.FenceClients)
	}}
	return ctrl.NewControllerManagedBy(mgr).Named("nodecidrs").WithOptions(opts).
		Watches(&workloadv1alpha1.SyncTarget{}, all, builder.WithPredicates(predicate.Or[client.Object](predicate.GenerationChangedPredicate{}, reported))).
		Complete(n)
}

// Reconcile sets the NodeCIDRsExclusive and FencingVerified conditions of every target with
// fencing, and takes them away from a target with none.
func (n *nodeCIDRs) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	targets := &workloadv1alpha1.SyncTargetList{}
	// Read only, from the cache as it is: every target is judged at each reconcile.
	if err := n.client.List(ctx, targets, client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	all := make([]fencing.NodeCIDRs, 0, len(targets.Items))
	byName := make(map[string]fencing.NodeCIDRs, len(targets.Items))
	for i := range targets.Items {
		if t := &targets.Items[i]; t.Spec.Fencing != nil {
			byName[t.Name] = cidrsOf(t)
			if t.DeletionTimestamp.IsZero() {
				all = append(all, byName[t.Name])
			}
		}
	}
	var errs []error
	for i := range targets.Items {
		t := &targets.Items[i]
		var exclusive, verified *metav1.Condition
		if t.Spec.Fencing != nil {
			c := exclusiveCondition(fencing.Overlaps(byName[t.Name], all))
			c.ObservedGeneration = t.Generation
			exclusive = &c
			if c, ok := fencing.VerifiedCondition(t); ok {
				verified = &c
			}
		}
		errs = append(errs,
			n.ensureCondition(ctx, t, workloadv1alpha1.ConditionNodeCIDRsExclusive, exclusive, cidrsFieldOwner, "CheckNodeCIDRs"),
			n.ensureCondition(ctx, t, workloadv1alpha1.ConditionFencingVerified, verified, verifiedFieldOwner, "VerifyFencing"))
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// ensureCondition writes t's condition of the type, c, under the field owner when it
// changed, and tells of it turning False in an event of the action; a nil c takes the
// condition away.
func (n *nodeCIDRs) ensureCondition(ctx context.Context, t *workloadv1alpha1.SyncTarget, kind string, c *metav1.Condition, owner, action string) error {
	if c == nil {
		if meta.FindStatusCondition(t.Status.Conditions, kind) == nil {
			return nil
		}
		// Applying none of its fields gives the condition up.
		return client.IgnoreNotFound(status.Apply(ctx, n.client, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t.Name}}, owner))
	}
	if !status.Changed(t.Status.Conditions, *c) {
		return nil
	}
	applied := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t.Name},
		Status: workloadv1alpha1.SyncTargetStatus{Conditions: []metav1.Condition{status.Condition(t.Status.Conditions, *c)}}}
	if err := status.Apply(ctx, n.client, applied, owner); err != nil {
		return client.IgnoreNotFound(err)
	}
	if c.Status == metav1.ConditionFalse {
		n.recorder.Eventf(t, nil, corev1.EventTypeWarning, c.Reason, action, "%s", c.Message)
	}
	return nil
}

func cidrsOf(t *workloadv1alpha1.SyncTarget) fencing.NodeCIDRs {
	return fencing.NewNodeCIDRs(t.Name, t.Spec.StorageDomains, t.Spec.Fencing.NodeCIDRs)
}

// exclusiveCondition is the NodeCIDRsExclusive condition of a target with these overlaps.
func exclusiveCondition(overlaps []fencing.Overlap) metav1.Condition {
	if len(overlaps) == 0 {
		return metav1.Condition{Type: workloadv1alpha1.ConditionNodeCIDRsExclusive, Status: metav1.ConditionTrue,
			Reason: workloadv1alpha1.ReasonNodeCIDRsExclusive, Message: "no other target of the target's storage domains has an address in its node CIDRs"}
	}
	said := make([]string, 0, len(overlaps))
	for _, o := range overlaps {
		said = append(said, o.String())
	}
	return metav1.Condition{Type: workloadv1alpha1.ConditionNodeCIDRsExclusive, Status: metav1.ConditionFalse,
		Reason:  workloadv1alpha1.ReasonNodeCIDRsOverlap,
		Message: strings.Join(said, "; ") + ": a Fence of either target would cut off the other's nodes too"}
}
