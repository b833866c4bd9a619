package dr

import (
	"context"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
	"github.com/custody-dev/custody/controllers/internal/leases"
	"github.com/custody-dev/custody/controllers/internal/versions"
	"github.com/custody-dev/custody/coordination/dr"
	"github.com/custody-dev/custody/fencing"
)

// fieldOwner owns the pair's status and the replica on a VolumeOwnership, and
// conditionOwner the Replicated condition of a VolumeOwnership.
const (
	fieldOwner     = "custody-dr"
	conditionOwner = "custody-dr-replicated"
)

// recheck is the longest a pair goes unlooked at: its replicas' age passes without an
// event. A Location on its way to being lost is looked at again when its threshold passes.
const recheck = 30 * time.Second

// Reconciler reconciles LocationPairs.
type Reconciler struct {
	Client client.Client
	// APIReader reads past the cache the pairs' key Secrets, which it watches not, and a
	// pair whose cached status is not the one last written.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Brake holds back a failover a pair would start on its own while many targets are
	// Unreachable at once; zero: no brake.
	Brake fencing.Brake

	// written are the versions of the pairs whose status this controller wrote last: a step
	// is decided from the status the last step wrote, never from an older one.
	written *versions.Written
}

// SetupWithManager watches the pairs and everything their decision reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if err := registerMetrics(mgr); err != nil {
		return err
	}
	r.written = versions.New()
	all := handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, func() client.ObjectList { return &schedulingv1alpha1.LocationPairList{} }, nil))
	return ctrl.NewControllerManagedBy(mgr).Named("dr").
		For(&schedulingv1alpha1.LocationPair{}).
		Watches(&schedulingv1alpha1.LocationPair{}, all, builder.WithPredicates(madeOrGone)).
		Watches(&schedulingv1alpha1.Location{}, all).
		Watches(&schedulingv1alpha1.Placement{}, all).
		Watches(&workloadv1alpha1.SyncTarget{}, all).
		Watches(&coordinationv1.Lease{}, handler.EnqueueRequestsFromMapFunc(r.holdersOf), builder.WithPredicates(leases.CleanReports())).
		Watches(&storagev1alpha1.Fence{}, all).
		Watches(&storagev1alpha1.VolumeOwnership{}, all).
		Watches(&corev1.PersistentVolumeClaim{}, all, builder.WithPredicates(claimAsked)).
		Watches(&storagev1alpha1.VolumeReplication{}, handler.EnqueueRequestsFromMapFunc(pairOf)).
		Watches(&schedulingv1alpha1.Drill{}, handler.EnqueueRequestsFromMapFunc(drilledPair)).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.starting)).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.starting)).
		WithOptions(opts).
		Complete(r)
}

// holdersOf maps a heartbeat Lease to the pairs that hold a Fence of its target: they let go
// of it on a clean report (see dr.Observation's stillFenced), and no other pair reads one.
func (r *Reconciler) holdersOf(ctx context.Context, lease client.Object) []ctrl.Request {
	fences := &storagev1alpha1.FenceList{}
	if err := r.Client.List(ctx, fences); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Fences")
		return nil
	}
	var out []ctrl.Request
	for i := range fences.Items {
		if f := &fences.Items[i]; f.Spec.TargetName == lease.GetName() && f.HolderPair() != "" {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKey{Name: f.HolderPair()}})
		}
	}
	return out
}

// starting maps a workload to the pairs whose switch waits for workloads to be ready: no
// other pair reads them.
func (r *Reconciler) starting(ctx context.Context, _ client.Object) []ctrl.Request {
	pairs := &schedulingv1alpha1.LocationPairList{}
	if err := r.Client.List(ctx, pairs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing LocationPairs")
		return nil
	}
	var out []ctrl.Request
	for i := range pairs.Items {
		if a := pairs.Items[i].Status.LastAction; a != nil && a.Progression == schedulingv1alpha1.ProgressionStarting {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&pairs.Items[i])})
		}
	}
	return out
}

// pairOf maps a VolumeReplication to its pair.
func pairOf(_ context.Context, o client.Object) []ctrl.Request {
	if p := o.GetLabels()[schedulingv1alpha1.PairLabel]; p != "" {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: p}}}
	}
	return nil
}

// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locationpairs,verbs=get;list;watch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=locationpairs/status,verbs=get;patch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=volumereplications,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=storage.custody.dev,resources=volumeownerships/status,verbs=get;patch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=fences,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",namespace=custody-system,resources=secrets,verbs=get;create
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments/status;statefulsets/status,verbs=patch

// drilledPair maps a Drill to its pair, which records it in its history.
func drilledPair(_ context.Context, o client.Object) []ctrl.Request {
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: o.(*schedulingv1alpha1.Drill).Spec.Pair}}}
}

// Reconcile takes one step of a pair, unless a pair made before it shares a Location: it
// decides, records the replicas and the Replicated conditions on the volumes, writes the
// decision into the pair's status, and then carries it out: the pair's key, the Fences, the
// replications, the restores and the quiesce.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &schedulingv1alpha1.LocationPair{}
	if err := versions.Get(ctx, r.written, r.Client, r.APIReader, req.NamespacedName, p); err != nil || !p.DeletionTimestamp.IsZero() {
		// What the pair made (its key, its replications) goes with it.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	shares, err := r.sharedLocations(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if dr.Yields(shares) {
		return ctrl.Result{}, r.writeYielded(ctx, p, dr.ExclusiveCondition(shares))
	}
	s, o, err := r.observe(ctx, p, time.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	d := dr.Decide(o)
	meta.SetStatusCondition(&d.Conditions, dr.ExclusiveCondition(shares))
	// The replicas a step takes are recorded before the status says the step began.
	if err := r.recordVolumes(ctx, s, d); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.writeStatus(ctx, p, d); err != nil {
		return ctrl.Result{}, err
	}
	// The claims are asked to restore as soon as the status says the step began, before the
	// Fences' and the replications' writes. Their namespaces follow the active Location, which
	// the decision switches only once it sees every claim asked: a claim whose namespace left
	// before it was asked would start a move first.
	if err := r.askRestores(ctx, s, d); err != nil {
		return ctrl.Result{}, err
	}
	if started := d.Action != nil && (o.Action == nil || !o.Action.StartTime.Equal(&d.Action.StartTime)); started {
		switches.WithLabelValues(p.Name, string(d.Action.Mode), strconv.FormatBool(d.Action.Automatic)).Inc()
		r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, string(d.Action.Mode), "Switch", "%s from %s to %s (automatic: %t)",
			d.Action.Mode, d.Action.From, d.Action.To, d.Action.Automatic)
	}
	if d.Ended {
		a := d.Action
		reason := schedulingv1alpha1.ReasonSwitchCompleted
		if a.Progression == schedulingv1alpha1.ProgressionCalledOff {
			reason = schedulingv1alpha1.ReasonFailoverCalledOff
		}
		r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, reason, "Switch", "%s", a.Summary())
	}
	if err := r.ensureKey(ctx, p); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.ensureFences(ctx, s, d.Fence); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.replicate(ctx, s, d, o.Pair.Schedule); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.quiesce(ctx, s, d); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.unreport(ctx, s, d); err != nil {
		return ctrl.Result{}, err
	}
	next := recheck
	if d.Recheck > 0 {
		next = min(next, d.Recheck)
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// claimAsked passes the updates of a claim that label it into or out of its pair's
// protection (storagev1alpha1.ProtectLabel), or change what it is asked to restore from: a
// switch's active Location waits for every claim to be seen asked. A claim made or deleted
// changes its VolumeOwnership too.
var claimAsked = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		restore := func(o client.Object) string { return o.GetAnnotations()[storagev1alpha1.RestoreAnnotation] }
		return storagev1alpha1.Unprotected(e.ObjectOld.GetLabels()) != storagev1alpha1.Unprotected(e.ObjectNew.GetLabels()) ||
			restore(e.ObjectOld) != restore(e.ObjectNew)
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
