package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/enqueue"
)

// DefaultResources are the namespaced types synced unless configured otherwise.
var DefaultResources = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("Secret"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	corev1.SchemeGroupVersion.WithKind("Pod"),
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
}

// decided are the types whose state on a target another controller decides: the statefulset
// controller a StatefulSet's, which goes to a target only once the claims of its
// volumeClaimTemplates are there. Claims are not the workload controller's at all: they follow
// their namespace in coordination (see controllers.Setup).
var decided = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

// Concurrency is how many objects of one type follow their namespace at once.
const Concurrency = 16

// Reconciler makes the objects of one type follow their namespace's placement. It reads
// metadata only, so it caches no object bodies.
type Reconciler struct {
	Client client.Client
	Kind   schema.GroupVersionKind
}

// SetupWithManager registers one controller per resource type.
func SetupWithManager(mgr ctrl.Manager, kinds []schema.GroupVersionKind, opts controller.Options) error {
	for _, kind := range kinds {
		r := &Reconciler{Client: mgr.GetClient(), Kind: kind}
		if err := r.SetupWithManager(mgr, opts); err != nil {
			return fmt.Errorf("workload controller for %s: %w", kind, err)
		}
	}
	return nil
}

// SetupWithManager registers the controller for r.Kind: objects are reconciled when they
// change and when their namespace's labels or annotations change.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	// A namespace that moves has every object of it patched: one worker would patch a
	// namespace's 500 claims one after another.
	opts.MaxConcurrentReconciles = Concurrency
	return ctrl.NewControllerManagedBy(mgr).Named("workload-"+strings.ToLower(r.Kind.Kind)).
		WatchesMetadata(r.newObject(), &handler.EnqueueRequestForObject{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(enqueue.All(r.Client, r.newList, enqueue.InNamespaceOf)),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WithOptions(opts).
		Complete(r)
}

func (r *Reconciler) newObject() *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.SetGroupVersionKind(r.Kind)
	return o
}

func (r *Reconciler) newList() client.ObjectList {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(r.Kind.GroupVersion().WithKind(r.Kind.Kind + "List"))
	return list
}

// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;serviceaccounts,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;patch

// Reconcile copies the namespace's state labels and deletion annotations onto the object.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !obj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // leaving every target: nothing to add
	}
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: req.Namespace}, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	change := workloadv1alpha1.Propagate(ns, obj, slices.Contains(decided, r.Kind), time.Now())
	if change.Empty() {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
	change.Apply(obj)
	if err := r.Client.Patch(ctx, obj, patch); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Followed namespace placement", "placed", change.Place, "leaving", change.Leave, "returning", change.Return)
	return ctrl.Result{}, nil
}
