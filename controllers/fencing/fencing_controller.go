package fencing

import (
	"context"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/leases"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/fencing"
)

const fieldOwner = "custody-fencing"

// Reconciler reconciles Fences.
type Reconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
}

// SetupWithManager watches Fences, the SyncTargets that fence or execute them, and the clean
// reports of the fenced targets' heartbeat Leases; beside
// it runs the check of the targets' node CIDRs: against each other's, and against the
// clients their storage reports.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if err := registerMetrics(mgr); err != nil {
		return err
	}
	if err := (&nodeCIDRs{client: r.Client, recorder: r.Recorder}).setup(mgr, opts); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("fencing").
		For(&storagev1alpha1.Fence{}).
		Watches(&workloadv1alpha1.SyncTarget{}, handler.EnqueueRequestsFromMapFunc(r.fencesOfDomains)).
		Watches(&schedulingv1alpha1.LocationPair{}, handler.EnqueueRequestsFromMapFunc(r.fencesHeldBy)).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(r.fencesOfTarget), builder.WithPredicates(leases.CleanReports())).
		WithOptions(opts).
		Complete(r)
}

// fencesOfDomains maps a target to the Fences of its storage domains, which it may fence or
// execute.
func (r *Reconciler) fencesOfDomains(ctx context.Context, o client.Object) []reconcile.Request {
	t := o.(*workloadv1alpha1.SyncTarget)
	return r.fencesWhere(ctx, func(f *storagev1alpha1.Fence) bool {
		return f.Spec.TargetName == t.Name || slices.Contains(t.Spec.StorageDomains, f.Spec.Domain)
	})
}

// fencesOfTarget maps a heartbeat Lease, whose clean report lifts a Fence, to the Fences of
// its target.
func (r *Reconciler) fencesOfTarget(ctx context.Context, lease client.Object) []reconcile.Request {
	return r.fencesWhere(ctx, func(f *storagev1alpha1.Fence) bool { return f.Spec.TargetName == lease.GetName() })
}

// fencesHeldBy maps a LocationPair to the Fences it holds, which are lifted once it is gone.
func (r *Reconciler) fencesHeldBy(ctx context.Context, o client.Object) []reconcile.Request {
	return r.fencesWhere(ctx, func(f *storagev1alpha1.Fence) bool { return f.HolderPair() == o.GetName() })
}

// fencesWhere are the requests of the Fences that match.
func (r *Reconciler) fencesWhere(ctx context.Context, match func(*storagev1alpha1.Fence) bool) []reconcile.Request {
	list := &storagev1alpha1.FenceList{}
	if err := r.Client.List(ctx, list); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Fences")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if match(&list.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// +kubebuilder:rbac:groups=storage.custody.dev,resources=fences,verbs=get;list;watch;update;patch;delete
// +kubebuilder:rbac:groups=storage.custody.dev,resources=fences/status,verbs=get;patch
// +kubebuilder:rbac:groups=workload.custody.dev,resources=synctargets,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locationpairs,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=workload.custody.dev,resources=synctargets/status,verbs=get;patch

// Reconcile takes one step of a Fence.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	f := &storagev1alpha1.Fence{}
	if err := r.Client.Get(ctx, req.NamespacedName, f); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if f.DeletionTimestamp.IsZero() && controllerutil.AddFinalizer(f, storagev1alpha1.FenceFinalizer) {
		return ctrl.Result{}, r.Client.Update(ctx, f)
	}
	o, target, err := r.observe(ctx, f)
	if err != nil {
		return ctrl.Result{}, err
	}
	d := fencing.FenceDecide(o)
	if d.Unfence {
		// The decision to lift the Fence is written before anything acts on it.
		patch := client.MergeFromWithOptions(f.DeepCopy(), client.MergeFromWithOptimisticLock{})
		f.Spec.State = storagev1alpha1.Unfenced
		r.Recorder.Eventf(f, target, corev1.EventTypeNormal, "Unfencing", "Unfence", "%s is back and clean, or the Fence was deleted: lifting it", f.Spec.TargetName)
		return ctrl.Result{}, r.Client.Patch(ctx, f, patch)
	}
	if err := r.label(ctx, f, d.Executor); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, f, target, d); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.markTarget(ctx, target, f, d); err != nil {
		return ctrl.Result{}, err
	}
	if !d.Done {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Delete(ctx, f); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	// The Fence goes once every syncer that made a NetworkFence for it unfenced and deleted
	// that NetworkFence and took its finalizer off; a target that is gone holds nothing.
	gone, err := r.goneSyncers(ctx, f)
	if err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(f.DeepCopy())
	removed := controllerutil.RemoveFinalizer(f, storagev1alpha1.FenceFinalizer)
	for _, fin := range gone {
		removed = controllerutil.RemoveFinalizer(f, fin) || removed
	}
	if removed {
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, f, patch))
	}
	return ctrl.Result{}, nil
}

// goneSyncers are the Fence's syncer finalizers whose SyncTarget no longer exists.
func (r *Reconciler) goneSyncers(ctx context.Context, f *storagev1alpha1.Fence) ([]string, error) {
	var held []string
	for _, fin := range f.Finalizers {
		if _, ok := workloadv1alpha1.SyncerFinalizerKey(fin); ok {
			held = append(held, fin)
		}
	}
	if len(held) == 0 {
		return nil, nil
	}
	targets := &workloadv1alpha1.SyncTargetList{}
	if err := r.Client.List(ctx, targets); err != nil {
		return nil, err
	}
	for _, t := range targets.Items {
		held = slices.DeleteFunc(held, func(fin string) bool {
			return fin == workloadv1alpha1.SyncerFinalizer(workloadv1alpha1.ToSyncTargetKey(t.Name))
		})
	}
	return held, nil
}

// observe reads the fenced target and the executors that could run the Fence.
func (r *Reconciler) observe(ctx context.Context, f *storagev1alpha1.Fence) (fencing.FenceObservation, *workloadv1alpha1.SyncTarget, error) {
	o := fencing.FenceObservation{
		Spec: f.Spec, Deleting: !f.DeletionTimestamp.IsZero(),
		Phase: f.Status.Phase, Executor: f.Status.Executor, WasFenced: f.Holds(),
	}
	if t := f.Status.UnfenceRequestedTime; t != nil {
		o.UnfenceAsked = t.Time
	}
	if pair := f.HolderPair(); pair != "" {
		// A holder that no longer exists lets go: nothing else would.
		err := r.Client.Get(ctx, client.ObjectKey{Name: pair}, &schedulingv1alpha1.LocationPair{})
		if apierrors.IsNotFound(err) {
			o.Spec.HeldBy = ""
		} else if err != nil {
			return o, nil, err
		}
	}
	if nf := f.Status.NetworkFence; nf != nil {
		o.Executed = fencing.Executed{By: nf.ReportedBy, FenceState: nf.FenceState, Result: nf.Result, Message: nf.Message}
	}
	targets := &workloadv1alpha1.SyncTargetList{}
	if err := r.Client.List(ctx, targets); err != nil {
		return o, nil, err
	}
	var target *workloadv1alpha1.SyncTarget
	for i := range targets.Items {
		t := &targets.Items[i]
		switch {
		case t.Name == f.Spec.TargetName:
			target = t
			view, err := targetView(ctx, r.Client, t, f.Spec.Domain)
			if err != nil {
				return o, nil, err
			}
			o.Target = view
		case t.IsReady() && slices.Contains(t.Spec.StorageDomains, f.Spec.Domain):
			o.Executors = append(o.Executors, t.Name)
		}
	}
	slices.Sort(o.Executors)
	return o, target, nil
}

// targetView is what the fencing decision reads of the fenced target t in domain: its
// health, and its clean report in the heartbeat Lease.
func targetView(ctx context.Context, r client.Reader, t *workloadv1alpha1.SyncTarget, domain string) (fencing.TargetView, error) {
	lease, err := leases.Of(ctx, r, t.Name)
	if err != nil {
		return fencing.TargetView{}, err
	}
	return fencing.TargetView{Found: true, Ready: t.IsReady(), Clean: t.IsClean(domain), NetworkFencing: t.Spec.Fencing != nil,
		Reported: t.CleanReportedAt(lease, domain), ReadySince: t.ReadySince()}, nil
}

// label gives the Fence to the executor's syncer, and takes it from any other.
func (r *Reconciler) label(ctx context.Context, f *storagev1alpha1.Fence, executor string) error {
	patch := client.MergeFromWithOptions(f.DeepCopy(), client.MergeFromWithOptimisticLock{})
	changed := false
	key := ""
	if executor != "" {
		key = workloadv1alpha1.ToSyncTargetKey(executor)
	}
	for _, k := range workloadv1alpha1.Targets(f) {
		if k != key {
			workloadv1alpha1.Release(f, k)
			changed = true
		}
	}
	if key != "" {
		if p, _ := workloadv1alpha1.PresenceOn(f, key); p.State != workloadv1alpha1.ResourceStateSync {
			workloadv1alpha1.SetState(f, key, workloadv1alpha1.ResourceStateSync)
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return r.Client.Patch(ctx, f, patch)
}

// writeStatus applies the decision to the Fence's status, stamping the time of each step.
func (r *Reconciler) writeStatus(ctx context.Context, f *storagev1alpha1.Fence, target *workloadv1alpha1.SyncTarget, d fencing.FenceDecision) error {
	st := f.Status.DeepCopy()
	now := metav1.NewTime(time.Now())
	st.Executor, st.Reason, st.Message = d.Executor, d.Reason, d.Message
	switch {
	case st.Phase != d.Phase:
		r.Recorder.Eventf(f, target, eventType(d.Phase), d.Reason, "Fence", "%s: %s", d.Phase, d.Message)
		if d.Phase == storagev1alpha1.FenceFenced {
			observeFenced(st)
		}
	case d.Reason == fencing.ReasonUnfencingLateFence && f.Status.Reason != d.Reason:
		// Still Unfencing, but the storage cut the target off after the lift: told apart.
		r.Recorder.Eventf(f, target, corev1.EventTypeWarning, d.Reason, "Fence", "%s: %s", d.Phase, d.Message)
	}
	st.Phase = d.Phase
	stamp := func(t **metav1.Time, when bool) {
		if when && *t == nil {
			*t = &now
		}
	}
	stamp(&st.RequestedTime, true)
	stamp(&st.FencedTime, d.Phase == storagev1alpha1.FenceFenced)
	stamp(&st.UnfenceRequestedTime, f.Spec.State == storagev1alpha1.Unfenced)
	stamp(&st.UnfencingTime, d.Phase == storagev1alpha1.FenceUnfencing)
	stamp(&st.UnfencedTime, d.Phase == storagev1alpha1.FenceUnfenced)
	ready := metav1.ConditionFalse
	if (d.Phase == storagev1alpha1.FenceFenced) == (f.Spec.State == storagev1alpha1.Fenced) && d.Phase != storagev1alpha1.FenceFailed {
		ready = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: storagev1alpha1.ConditionReady, Status: ready, Reason: d.Reason, Message: d.Message, ObservedGeneration: f.Generation})
	if target != nil && target.Spec.Fencing != nil {
		if st.NetworkFence == nil {
			st.NetworkFence = &storagev1alpha1.NetworkFenceStatus{}
		}
		st.NetworkFence.ClassName, st.NetworkFence.CIDRs = target.Spec.Fencing.NetworkFenceClassName, target.Spec.Fencing.NodeCIDRs
	}
	applied := &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: f.Name}, Status: *st}
	if nf := applied.Status.NetworkFence; nf != nil {
		// The executor's report is the executor's field to write.
		applied.Status.NetworkFence = &storagev1alpha1.NetworkFenceStatus{ClassName: nf.ClassName, CIDRs: nf.CIDRs}
	}
	if equality.Semantic.DeepEqual(f.Status, *st) {
		return nil
	}
	return status.Apply(ctx, r.Client, applied, fieldOwner)
}

func eventType(p storagev1alpha1.FencePhase) string {
	if p == storagev1alpha1.FenceFailed {
		return corev1.EventTypeWarning
	}
	return corev1.EventTypeNormal
}

// markTarget keeps the target's Fenced condition: True while any Fence of it holds, False
// with the reason of a Fence that failed, and tells of each change in an event. The Fence
// decided counts as the decision d leaves it, which the cache may not show yet.
func (r *Reconciler) markTarget(ctx context.Context, t *workloadv1alpha1.SyncTarget, decided *storagev1alpha1.Fence, d fencing.FenceDecision) error {
	if t == nil {
		return nil
	}
	list := &storagev1alpha1.FenceList{}
	if err := r.Client.List(ctx, list); err != nil {
		return err
	}
	fences := slices.DeleteFunc(list.Items, func(f storagev1alpha1.Fence) bool { return f.Name == decided.Name })
	if !d.Done {
		f := decided.DeepCopy()
		f.Status.Phase, f.Status.Message = d.Phase, d.Message
		fences = append(fences, *f)
	}
	c := fencedCondition(t.Name, fences)
	c.ObservedGeneration = t.Generation
	if !status.Changed(t.Status.Conditions, c) {
		return nil
	}
	applied := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: t.Name},
		Status: workloadv1alpha1.SyncTargetStatus{Conditions: []metav1.Condition{status.Condition(t.Status.Conditions, c)}}}
	if err := status.Apply(ctx, r.Client, applied, fieldOwner); err != nil {
		return client.IgnoreNotFound(err)
	}
	kind := corev1.EventTypeNormal
	if c.Reason == storagev1alpha1.ReasonFenceFailed {
		kind = corev1.EventTypeWarning
	}
	r.Recorder.Eventf(t, nil, kind, c.Reason, "Fence", "%s", c.Message)
	return nil
}

// storageFenced tells whether the executor's last report says the storage fenced the target,
// also after the Fence was lifted: the target is then cut off until the unfence is confirmed.
func storageFenced(f *storagev1alpha1.Fence) bool {
	nf := f.Status.NetworkFence
	return nf != nil && nf.ReportedBy == f.Status.Executor &&
		fencing.StorageFenced(fencing.Executed{By: nf.ReportedBy, FenceState: nf.FenceState, Result: nf.Result, Message: nf.Message})
}

// fencedCondition is the Fenced condition of the target, given every Fence.
func fencedCondition(target string, fences []storagev1alpha1.Fence) metav1.Condition {
	var holding, failed []string
	for _, f := range fences {
		switch {
		case f.Spec.TargetName != target:
		case f.Holds() || storageFenced(&f):
			holding = append(holding, f.Spec.Domain)
		case f.Status.Phase == storagev1alpha1.FenceFailed:
			failed = append(failed, f.Name+": "+f.Status.Message)
		}
	}
	slices.Sort(holding)
	slices.Sort(failed)
	c := metav1.Condition{Type: workloadv1alpha1.ConditionFenced, Status: metav1.ConditionFalse, Reason: "NotFenced", Message: "no Fence holds the target"}
	switch {
	case len(holding) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "Fenced", "cut off storage domains "+strings.Join(holding, ", ")+"; the target takes no work until it is unfenced"
	case len(failed) > 0:
		c.Reason, c.Message = storagev1alpha1.ReasonFenceFailed, "fencing failed and is retried: "+strings.Join(failed, "; ")
	}
	return c
}
