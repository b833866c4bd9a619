package dr

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func unstructuredOf(t *testing.T, obj runtime.Object, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion("v1")
	u.SetKind(kind)
	return u
}

func TestSandboxCopyTakesNoTrafficFromOutsideAndNothingOfCustodys(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "u1", ResourceVersion: "7",
			Labels:      map[string]string{"app": "web", "workload.custody.dev/state": "Sync"},
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}", "team": "a"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.0.0.7", ClusterIPs: []string{"10.0.0.7"},
			ExternalIPs: []string{"1.2.3.4"}, Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Port: 80, NodePort: 30080}}, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}}},
	}
	out := &corev1.Service{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(sandboxCopy(unstructuredOf(t, svc, "Service"), "shop-drill", "d1").Object, out); err != nil {
		t.Fatal(err)
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop-drill",
			Labels: map[string]string{"app": "web", schedulingv1alpha1.DrillLabel: "d1"}, Annotations: map[string]string{"team": "a"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Selector: map[string]string{"app": "web"}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	out.TypeMeta = metav1.TypeMeta{}
	if !equality.Semantic.DeepEqual(out, want) {
		t.Fatalf("copy %+v, want %+v", out, want)
	}

	headless := svc.DeepCopy()
	headless.Spec.Type, headless.Spec.ClusterIP = corev1.ServiceTypeClusterIP, corev1.ClusterIPNone
	if ip, _, _ := unstructured.NestedString(sandboxCopy(unstructuredOf(t, headless, "Service"), "shop-drill", "d1").Object, "spec", "clusterIP"); ip != corev1.ClusterIPNone {
		t.Fatalf("a headless Service's copy has clusterIP %q", ip)
	}
}

func TestSandboxCopyLeavesWhatEveryNamespaceHasByItself(t *testing.T) {
	for _, tc := range []struct {
		obj  runtime.Object
		kind string
	}{
		{&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, "ServiceAccount"},
		{&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}}, "ConfigMap"},
		{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "t"}, Type: corev1.SecretTypeServiceAccountToken}, "Secret"},
	} {
		if out := sandboxCopy(unstructuredOf(t, tc.obj, tc.kind), "shop-drill", "d1"); out != nil {
			t.Errorf("%s copied: %v", tc.kind, out.Object)
		}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: map[string][]byte{"password": []byte("x")}}
	if out := sandboxCopy(unstructuredOf(t, secret, "Secret"), "shop-drill", "d1"); out == nil || out.Object["data"] == nil {
		t.Errorf("a Secret of the namespace's own is not copied with its data: %v", out)
	}
}

func TestSandboxClaimIsRestoredFromTheReplicaPicked(t *testing.T) {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "shop", Labels: map[string]string{storagev1alpha1.ProtectLabel: "true"},
			Annotations: map[string]string{storagev1alpha1.RestoreAnnotation: "old/snap", storagev1alpha1.StatefulSetAnnotation: "db"}},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pv-1", StorageClassName: ptr.To("fast"),
			DataSourceRef: &corev1.TypedObjectReference{Kind: "VolumeSnapshot", Name: "x"}},
	}
	out := sandboxClaim(c, "shop-drill", "d1", "w1/shop/snap-2", "west-fast")
	expect := map[string]string{storagev1alpha1.RestoreAnnotation: "w1/shop/snap-2", storagev1alpha1.StorageClassAnnotation: "west-fast"}
	if !equality.Semantic.DeepEqual(out.Annotations, expect) || out.Labels[schedulingv1alpha1.DrillLabel] != "d1" || len(out.Labels) != 1 {
		t.Fatalf("metadata %v %v", out.Labels, out.Annotations)
	}
	if out.Spec.VolumeName != "" || out.Spec.DataSourceRef != nil || *out.Spec.StorageClassName != "fast" || out.Namespace != "shop-drill" {
		t.Fatalf("spec %+v", out.Spec)
	}
}
