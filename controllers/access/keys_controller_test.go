package access

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestKeysRemovesOnlyAGrantThatExists(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, storagev1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	meta := metav1.ObjectMeta{Namespace: storagev1alpha1.KeyNamespace, Name: "custody-syncer-m1-keys", Labels: grantLabels("m1")}
	identity := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: workloadv1alpha1.SyncerIdentity("m1")}}
	for _, tc := range []struct {
		name    string
		objs    []client.Object
		deletes int
	}{
		{"no replication and no grant: no write", []client.Object{identity}, 0},
		{"no replication, a grant left: the grant is taken away", []client.Object{identity,
			&rbacv1.Role{ObjectMeta: *meta.DeepCopy()}, &rbacv1.RoleBinding{ObjectMeta: *meta.DeepCopy()}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deletes := 0
			c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).Build(), interceptor.Funcs{
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					deletes++
					return c.Delete(ctx, obj, opts...)
				},
			})
			if _, err := (&Keys{Client: c}).Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKey{Name: "m1"}}); err != nil {
				t.Fatal(err)
			}
			if deletes != tc.deletes {
				t.Errorf("%d deletes, want %d", deletes, tc.deletes)
			}
			for _, obj := range []client.Object{&rbacv1.Role{}, &rbacv1.RoleBinding{}} {
				if err := c.Get(context.Background(), client.ObjectKey{Namespace: meta.Namespace, Name: meta.Name}, obj); !apierrors.IsNotFound(err) {
					t.Errorf("%T: %v, want it gone", obj, err)
				}
			}
		})
	}
}
