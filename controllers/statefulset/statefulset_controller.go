package statefulset

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// Reconciler makes and keeps the claims of the hub's StatefulSets, and places each set on a
// target once its claims are there.
type Reconciler struct {
	Client client.Client
	// APIReader reads past the cache: a set is confirmed alive there before its claims are
	// made.
	APIReader client.Reader
	Recorder  events.EventRecorder
}

// SetupWithManager registers the controller: a set is reconciled when it changes and when a
// claim its templates name changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("custody-statefulset")
	}
	return ctrl.NewControllerManagedBy(mgr).Named("statefulset").
		For(&appsv1.StatefulSet{}).
		Watches(&corev1.PersistentVolumeClaim{}, handler.EnqueueRequestsFromMapFunc(r.setsOfClaim)).
		WithOptions(opts).
		Complete(r)
}

// setsOfClaim maps a claim to the sets of its namespace whose templates name it, or that
// marked it as theirs.
func (r *Reconciler) setsOfClaim(ctx context.Context, o client.Object) []reconcile.Request {
	sets := &appsv1.StatefulSetList{}
	if err := r.Client.List(ctx, sets, client.InNamespace(o.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing StatefulSets")
		return nil
	}
	var out []reconcile.Request
	for i := range sets.Items {
		s := &sets.Items[i]
		if _, ok := ordinalOf(s, o.GetName()); ok || o.GetAnnotations()[storagev1alpha1.StatefulSetAnnotation] == s.Name {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
		}
	}
	return out
}

// +kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=statefulsets/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings the set's claims in line with its templates, ordinals and retention
// policy, then places the set where its claims are.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !set.DeletionTimestamp.IsZero() {
		// The hub's garbage collector deletes the claims the set owns; the others stay.
		return ctrl.Result{}, nil
	}
	// Every claim of the namespace, straight from the cache: this runs on each change of the
	// set's claims, and the plan copies a claim before it changes one.
	claims := &corev1.PersistentVolumeClaimList{}
	if err := r.Client.List(ctx, claims, client.InNamespace(set.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return ctrl.Result{}, err
	}
	p := planClaims(set, claims.Items)
	for _, phase := range []func(context.Context, *appsv1.StatefulSet, plan) error{
		r.ensureClaims, r.ensureOwnership, r.removeScaledDown, r.ensurePlacement,
	} {
		if err := phase(ctx, set, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
