package access

import (
	"context"
	"errors"

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

// Keys keeps, for every target, the Role and RoleBinding in custody-system that let its
// syncer get the key Secrets of the VolumeReplications labelled for it, and no other Secret.
type Keys struct {
	Client client.Client
}

// SetupWithManager reconciles a target when a VolumeReplication labelled for it changes, or
// its grant does.
func (r *Keys) SetupWithManager(mgr ctrl.Manager, opts controller.Options) error {
	granted := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
		return requests([]string{obj.GetLabels()[TargetLabel]})
	})
	inKeyNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == storagev1alpha1.KeyNamespace })
	return ctrl.NewControllerManagedBy(mgr).Named("access-keys").WithOptions(opts).
		Watches(&storagev1alpha1.VolumeReplication{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			return requests(workloadv1alpha1.Targets(obj))
		}), builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, predicate.GenerationChangedPredicate{}))).
		Watches(&corev1.ServiceAccount{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []reconcile.Request {
			key, _ := keyOfIdentity(obj)
			return requests([]string{key})
		}), builder.WithPredicates(identities)).
		Watches(&rbacv1.Role{}, granted, builder.WithPredicates(inKeyNamespace)).
		Watches(&rbacv1.RoleBinding{}, granted, builder.WithPredicates(inKeyNamespace)).
		Complete(r)
}

func requests(keys []string) []reconcile.Request {
	var out []reconcile.Request
	for _, key := range keys {
		if key != "" {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Name: key}})
		}
	}
	return out
}

// Reconcile grants the target's syncer its key Secrets, or takes the grant away when it has
// none (a Role's rule without resource names would grant every Secret) or its identity is
// gone.
func (r *Keys) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	key := req.Name
	vrs := &storagev1alpha1.VolumeReplicationList{}
	if err := r.Client.List(ctx, vrs, client.HasLabels{workloadv1alpha1.StateLabel(key)}); err != nil {
		return ctrl.Result{}, err
	}
	replications := make([]metav1.Object, len(vrs.Items))
	for i := range vrs.Items {
		replications[i] = &vrs.Items[i]
	}
	names := KeySecrets(key, replications, func(o metav1.Object) string { return o.(*storagev1alpha1.VolumeReplication).Spec.KeySecret })
	meta := metav1.ObjectMeta{Namespace: storagev1alpha1.KeyNamespace, Name: "custody-syncer-" + key + "-keys"}
	role, b := &rbacv1.Role{ObjectMeta: meta}, &rbacv1.RoleBinding{ObjectMeta: *meta.DeepCopy()}
	exists, err := identityExists(ctx, r.Client, key)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(names) == 0 || !exists {
		return ctrl.Result{}, errors.Join(r.remove(ctx, b), r.remove(ctx, role))
	}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, role, func() error {
		role.Labels = grantLabels(key)
		role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: names}}
		return nil
	}); err != nil {
		return ctrl.Result{}, err
	}
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, b, func() error {
		if b.RoleRef.Name != "" && b.RoleRef.Name != role.Name {
			return errors.New("rolebinding " + b.Name + " binds another role")
		}
		b.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}
		bound(b, key)
		return nil
	})
	return ctrl.Result{}, err
}

// remove deletes a grant, if the cache shows one: a target without replications costs no
// write at each start of the controller. A grant made since the cache last heard comes back
// to the reconciler with its own event.
func (r *Keys) remove(ctx context.Context, obj client.Object) error {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	err := r.Client.Delete(ctx, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("Took a syncer's key grant away", "object", client.ObjectKeyFromObject(obj))
	}
	return err
}
