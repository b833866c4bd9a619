package access

import (
	"context"
	"errors"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// The controller grants roles it may bind, and reads what it grants them for.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings;roles,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=custody-syncer-namespace;custody-syncer-replica
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=storage.custody.dev,resources=volumereplications,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch

// Namespaces keeps the RoleBindings of every namespace in line with its Grants.
type Namespaces struct {
	Client client.Client
}

// SetupWithManager reconciles a namespace when its labels change, when a VolumeReplication
// in it changes, when a RoleBinding granted in it changes or goes, and when a syncer
// identity that is or would be granted there comes or goes.
func (r *Namespaces) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	return ctrl.NewControllerManagedBy(mgr).Named("access").WithOptions(opts).
		For(&corev1.Namespace{}, builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&storagev1alpha1.VolumeReplication{}, handler.EnqueueRequestsFromMapFunc(namespaceOf),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Watches(&rbacv1.RoleBinding{}, handler.EnqueueRequestsFromMapFunc(namespaceOf)).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(r.namespacesOfIdentity), builder.WithPredicates(identities)).
		Complete(r)
}

// identities lets through the syncers' hub identities only.
var identities = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	_, ok := keyOfIdentity(obj)
	return ok
})

// keyOfIdentity is the key of the target whose syncer's hub identity the ServiceAccount is.
func keyOfIdentity(sa client.Object) (string, bool) {
	if sa.GetNamespace() != workloadv1alpha1.SyncerIdentityNamespace {
		return "", false
	}
	key, ok := strings.CutPrefix(sa.GetName(), workloadv1alpha1.SyncerIdentity(""))
	return key, ok && key != ""
}

// namespacesOfIdentity maps a syncer's identity to the namespaces where its target holds a
// grant or is placed.
func (r *Namespaces) namespacesOfIdentity(ctx context.Context, sa client.Object) []reconcile.Request {
	key, _ := keyOfIdentity(sa)
	seen := map[string]bool{}
	grants := &rbacv1.RoleBindingList{}
	placed := &corev1.NamespaceList{}
	if err := r.Client.List(ctx, grants, client.MatchingLabels{TargetLabel: key}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the grants of a syncer identity", "identity", sa.GetName())
	}
	if err := r.Client.List(ctx, placed, client.HasLabels{workloadv1alpha1.StateLabel(key)}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing the namespaces placed on a target", "target", key)
	}
	for i := range grants.Items {
		seen[grants.Items[i].Namespace] = true
	}
	for i := range placed.Items {
		seen[placed.Items[i].Name] = true
	}
	var out []reconcile.Request
	for ns := range seen {
		out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: ns}})
	}
	return out
}

func namespaceOf(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: obj.GetNamespace()}}}
}

// Reconcile takes away what a namespace's Grants no longer say, then grants what they say.
// The key namespace is left alone: no namespace there is placed, and the grants of the key
// Secrets in it, labelled as these are, are the Keys controller's.
// A grant carries Finalizer, which holds it while the namespace is deleted and until the
// syncer let go: the namespace's deletion would otherwise take the grant before the objects
// that wait for the syncer.
func (r *Namespaces) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name == storagev1alpha1.KeyNamespace {
		return ctrl.Result{}, nil // its grants are the Keys controller's
	}
	ns := &corev1.Namespace{}
	if err := r.Client.Get(ctx, req.NamespacedName, ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	vrs := &storagev1alpha1.VolumeReplicationList{}
	if err := r.Client.List(ctx, vrs, client.InNamespace(ns.Name)); err != nil {
		return ctrl.Result{}, err
	}
	replications := make([]metav1.Object, len(vrs.Items))
	for i := range vrs.Items {
		replications[i] = &vrs.Items[i]
	}
	want := map[string]*rbacv1.RoleBinding{}
	for key, role := range NamespaceGrants(ns, replications) {
		if exists, err := identityExists(ctx, r.Client, key); err != nil || !exists {
			if err != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		b := binding(ns.Name, key, role)
		want[b.Name] = b
	}
	have := &rbacv1.RoleBindingList{}
	if err := r.Client.List(ctx, have, client.InNamespace(ns.Name), client.HasLabels{TargetLabel}); err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for i := range have.Items {
		b := &have.Items[i]
		if w := want[b.Name]; w != nil && same(b, w) {
			delete(want, b.Name)
			continue
		}
		errs = append(errs, r.revoke(ctx, b))
	}
	if !ns.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, errors.Join(errs...)
	}
	for _, b := range want {
		if err := r.Client.Create(ctx, b); client.IgnoreAlreadyExists(err) != nil {
			errs = append(errs, err)
			continue
		}
		ctrl.LoggerFrom(ctx).Info("Granted a syncer its reads", "roleBinding", client.ObjectKeyFromObject(b), "role", b.RoleRef.Name)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// revoke releases a grant and deletes it; one that binds another role or identity than it
// should is made again once it is gone, as a RoleBinding's roleRef cannot change.
func (r *Namespaces) revoke(ctx context.Context, b *rbacv1.RoleBinding) error {
	if controllerutil.RemoveFinalizer(b, Finalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return client.IgnoreNotFound(err)
		}
	}
	if !b.DeletionTimestamp.IsZero() {
		return nil
	}
	if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &b.UID}); err != nil {
		return client.IgnoreNotFound(err)
	}
	ctrl.LoggerFrom(ctx).Info("Took a syncer's grant away", "roleBinding", client.ObjectKeyFromObject(b))
	return nil
}

// identityExists tells whether the hub identity of the target's syncer exists: one that
// unjoin --revoke deleted is granted nothing, and loses its grants at once, before the API
// server stops taking its tokens.
func identityExists(ctx context.Context, c client.Reader, key string) (bool, error) {
	sa := &corev1.ServiceAccount{}
	err := c.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: workloadv1alpha1.SyncerIdentity(key)}, sa)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// binding is the RoleBinding that grants role to the syncer of the target with key in the
// namespace: one name per target and role.
func binding(namespace, key, role string) *rbacv1.RoleBinding {
	name := "custody-syncer-" + key
	if role == ReplicaRole {
		name += "-replica"
	}
	return bound(&rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
	}, key, Finalizer)
}

// bound labels b for the target with key, makes its syncer b's one subject, and gives b
// the finalizers.
func bound(b *rbacv1.RoleBinding, key string, finalizers ...string) *rbacv1.RoleBinding {
	b.Finalizers = finalizers
	b.Labels = grantLabels(key)
	b.Subjects = []rbacv1.Subject{{
		Kind: rbacv1.ServiceAccountKind, Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: workloadv1alpha1.SyncerIdentity(key),
	}}
	return b
}

// grantLabels are the labels of a grant to the syncer of the target with key.
func grantLabels(key string) map[string]string {
	return map[string]string{TargetLabel: key, "app.kubernetes.io/part-of": "custody"}
}

// same tells whether have binds what want binds, to whom. A grant being deleted with its
// namespace stays while it is wanted.
func same(have, want *rbacv1.RoleBinding) bool {
	return have.RoleRef == want.RoleRef && len(have.Subjects) == 1 && have.Subjects[0] == want.Subjects[0] &&
		have.Labels[TargetLabel] == want.Labels[TargetLabel]
}
