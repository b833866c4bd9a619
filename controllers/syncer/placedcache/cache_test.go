package placedcache

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// countingMapper counts the scope lookups that reach the REST mapper.
type countingMapper struct {
	apimeta.RESTMapper
	lookups int
}

func (m *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*apimeta.RESTMapping, error) {
	m.lookups++
	return m.RESTMapper.RESTMapping(gk, versions...)
}

func TestEverywhereAsksTheMapperOncePerKind(t *testing.T) {
	mapper := apimeta.NewDefaultRESTMapper(nil)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"), apimeta.RESTScopeNamespace)
	mapper.Add(corev1.SchemeGroupVersion.WithKind("PersistentVolume"), apimeta.RESTScopeRoot)
	mapper.Add(rbacv1.SchemeGroupVersion.WithKind("RoleBinding"), apimeta.RESTScopeNamespace)
	counting := &countingMapper{RESTMapper: mapper}
	c := &Cache{opts: cache.Options{Scheme: clientgoscheme.Scheme, Mapper: counting},
		o: Options{Everywhere: []schema.GroupKind{{Group: rbacv1.GroupName, Kind: "RoleBinding"}}}}

	cases := []struct {
		obj runtime.Object
		all bool
	}{
		{&corev1.PersistentVolumeClaim{}, false},
		{&corev1.PersistentVolumeClaimList{}, false},
		{&corev1.PersistentVolume{}, true},
		{&corev1.PersistentVolumeList{}, true},
		{&rbacv1.RoleBinding{}, true},
	}
	for range 3 {
		for _, tc := range cases {
			_, all, err := c.everywhere(tc.obj)
			if err != nil || all != tc.all {
				t.Fatalf("%T: read everywhere %v (%v), want %v", tc.obj, all, err, tc.all)
			}
		}
	}
	// One lookup for the claims (their list is the same kind) and one for the volumes; none
	// for the kind named Everywhere.
	if counting.lookups != 2 {
		t.Errorf("the mapper was asked %d times, want 2", counting.lookups)
	}
}
