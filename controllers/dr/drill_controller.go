package dr

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/status"
	"github.com/custody-dev/custody/coordination/dr"
)

// drillFieldOwner owns the objects a drill makes.
const drillFieldOwner = "custody-drill"

// endingRecheck paces a drill whose sandboxes are being deleted.
const endingRecheck = 2 * time.Second

// DrillReconciler reconciles Drills: it makes each drill's sandboxes once its pair can be
// drilled, follows them until they serve, and removes them when the drill is deleted.
type DrillReconciler struct {
	Client client.Client
	// APIReader reads the objects of the pair's namespaces that a drill copies, Secrets
	// among them, which the controller neither watches nor caches.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// SetupWithManager watches the drills, their pairs and replications, and what the drills
// made.
func (r *DrillReconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	byPair := handler.EnqueueRequestsFromMapFunc(r.drillsOf)
	made := handler.EnqueueRequestsFromMapFunc(madeBy)
	return ctrl.NewControllerManagedBy(mgr).Named("drill").
		For(&schedulingv1alpha1.Drill{}).
		Watches(&schedulingv1alpha1.LocationPair{}, byPair).
		Watches(&storagev1alpha1.VolumeReplication{}, byPair).
		Watches(&corev1.Namespace{}, made).
		Watches(&corev1.PersistentVolumeClaim{}, made).
		Watches(&storagev1alpha1.VolumeOwnership{}, handler.EnqueueRequestsFromMapFunc(r.recordOf)).
		Watches(&appsv1.Deployment{}, made).
		Watches(&appsv1.StatefulSet{}, made).
		WithOptions(opts).
		Complete(r)
}

// drillsOf maps a pair, or a VolumeReplication of one, to the pair's drills.
func (r *DrillReconciler) drillsOf(ctx context.Context, o client.Object) []ctrl.Request {
	pair := o.GetName()
	if _, ok := o.(*storagev1alpha1.VolumeReplication); ok {
		pair = o.GetLabels()[schedulingv1alpha1.PairLabel]
	}
	drills := &schedulingv1alpha1.DrillList{}
	if err := r.Client.List(ctx, drills); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing Drills")
		return nil
	}
	var out []ctrl.Request
	for _, d := range drills.Items {
		if d.Spec.Pair == pair {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKey{Name: d.Name}})
		}
	}
	return out
}

// recordOf maps the record of a claim in a drill's sandbox to the drill, which the sandbox
// namespace's label names.
func (r *DrillReconciler) recordOf(ctx context.Context, o client.Object) []ctrl.Request {
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: o.GetNamespace()}, ns); err != nil {
		return nil
	}
	return madeBy(ctx, ns)
}

// madeBy maps an object a drill made to the drill.
func madeBy(_ context.Context, o client.Object) []ctrl.Request {
	if d := o.GetLabels()[schedulingv1alpha1.DrillLabel]; d != "" {
		return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: d}}}
	}
	return nil
}

// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=drills,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=drills/status,verbs=get;patch
// +kubebuilder:rbac:groups=scheduling.custody.dev,resources=placements,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;serviceaccounts;services,verbs=get;list;create
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=create
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;create

// Reconcile takes one step of a drill: it decides from what the drill, its pair and its
// sandboxes say, makes what the sandboxes lack, and writes the drill's status; a deleted
// drill's sandboxes are removed first.
func (r *DrillReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	d := &schedulingv1alpha1.Drill{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !d.DeletionTimestamp.IsZero() {
		return r.end(ctx, d)
	}
	if !controllerutil.ContainsFinalizer(d, schedulingv1alpha1.DrillFinalizer) {
		patch := client.MergeFrom(d.DeepCopy())
		controllerutil.AddFinalizer(d, schedulingv1alpha1.DrillFinalizer)
		if err := r.Client.Patch(ctx, d, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	s, o, err := r.observe(ctx, d, time.Now())
	if err != nil {
		return ctrl.Result{}, err
	}
	dec := dr.DecideDrill(o)
	if dec.Sandbox {
		if err := r.makeSandboxes(ctx, d, s, dec); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: recheck}, r.writeStatus(ctx, d, dec.Status)
}

// end removes what the drill made: its sandboxes first, whose claims the coordinator
// releases through the target that holds them as it does any deleted claim's, then, once they
// are gone, the Placement that keeps them on that target (gone first, it would have the
// claims move away and be kept, as a claim whose volume no target holds is); the drill goes
// last.
func (r *DrillReconciler) end(ctx context.Context, d *schedulingv1alpha1.Drill) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(d, schedulingv1alpha1.DrillFinalizer) {
		return ctrl.Result{}, nil
	}
	namespaces := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, namespaces, client.MatchingLabels{schedulingv1alpha1.DrillLabel: d.Name}); err != nil {
		return ctrl.Result{}, err
	}
	for i := range namespaces.Items {
		if ns := &namespaces.Items[i]; ns.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if len(namespaces.Items) > 0 {
		st := *d.Status.DeepCopy()
		st.Phase = schedulingv1alpha1.DrillEnding
		st.Conditions = []metav1.Condition{dr.DrillEnding(len(namespaces.Items))}
		return ctrl.Result{RequeueAfter: endingRecheck}, r.writeStatus(ctx, d, st)
	}
	pl := &schedulingv1alpha1.Placement{}
	pl.Name = placementOf(d.Name)
	if err := r.Client.Delete(ctx, pl); client.IgnoreNotFound(err) != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFrom(d.DeepCopy())
	controllerutil.RemoveFinalizer(d, schedulingv1alpha1.DrillFinalizer)
	return ctrl.Result{}, r.Client.Patch(ctx, d, patch)
}

// writeStatus writes the drill's status when it changed, telling a change of phase in an
// event.
func (r *DrillReconciler) writeStatus(ctx context.Context, d *schedulingv1alpha1.Drill, st schedulingv1alpha1.DrillStatus) error {
	for i, c := range st.Conditions {
		c.ObservedGeneration = d.Generation
		st.Conditions[i] = status.Condition(d.Status.Conditions, c)
	}
	if equality.Semantic.DeepEqual(d.Status, st) {
		return nil
	}
	if d.Status.Phase != st.Phase {
		msg := string(st.Phase)
		if len(st.Conditions) > 0 {
			msg += ": " + st.Conditions[0].Message
		}
		r.Recorder.Eventf(d, nil, corev1.EventTypeNormal, string(st.Phase), "Drill", "%s", msg)
	}
	// Optimistically: a status decided from a stale read (a ready drill seen not ready yet)
	// conflicts, and is decided again, rather than measure the drill a second time.
	patch := client.MergeFromWithOptions(d.DeepCopy(), client.MergeFromWithOptimisticLock{})
	d.Status = st
	return r.Client.Status().Patch(ctx, d, patch)
}
