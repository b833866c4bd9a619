package transform

import (
	"maps"
	"regexp"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/packedcache"
)

var target = Target{Key: "m1", Hub: "8f14e45f-ceea-467f-a0e6-1b9a2d5c7e10"}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func toUnstructured(t *testing.T, obj runtime.Object, apiVersion, kind string) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	return u
}

func TestNames(t *testing.T) {
	other := []Target{{Key: "m2", Hub: target.Hub}, {Key: "m1", Hub: "another-hub"}}
	ns := target.Namespace("team-a")
	if !dnsLabel.MatchString(ns) || len(ns) > 63 {
		t.Fatalf("namespace %q is not a DNS label", ns)
	}
	if target.Namespace("team-a") != ns {
		t.Fatal("the namespace name is not deterministic")
	}
	if target.Namespace("team-b") == ns {
		t.Fatal("two hub namespaces share a downstream namespace")
	}
	for _, o := range other {
		if o.Namespace("team-a") == ns {
			t.Fatalf("target %+v shares the downstream namespace of %+v", o, target)
		}
	}

	pv := target.PVName("pvc-1", nil)
	if !dnsLabel.MatchString(pv) || pv == "pvc-1" {
		t.Fatalf("PV name %q is not a translated DNS label", pv)
	}
	recorded := map[string]string{workloadv1alpha1.PVNameAnnotation("m1"): "pvc-member"}
	if got := target.PVName("pvc-1", recorded); got != "pvc-member" {
		t.Fatalf("PV name with the member's name recorded: got %q", got)
	}
	if got := other[0].PVName("pvc-1", recorded); got != other[0].PVName("pvc-1", nil) {
		t.Fatalf("another target used m1's recorded name: %q", got)
	}
}

func TestProtocolReading(t *testing.T) {
	obj := &metav1.ObjectMeta{Labels: map[string]string{"state.workload.custody.dev/m1": "Sync"}}
	if s, ok := target.State(obj); !ok || s != workloadv1alpha1.ResourceStateSync {
		t.Fatalf("state: %q %v", s, ok)
	}
	if _, ok := (Target{Key: "m2"}).State(obj); ok {
		t.Fatal("m2 read m1's state")
	}
	if target.RemovalRequested(obj) || target.Held(obj) {
		t.Fatal("removal requested or held with no annotation")
	}
	obj.Annotations = map[string]string{
		"deletion.internal.workload.custody.dev/m1": "2026-01-02T03:04:05Z",
		"finalizers.workload.custody.dev/m1":        "coordination.custody.dev/volume",
		"finalizers.workload.custody.dev/m2":        "",
	}
	if !target.RemovalRequested(obj) || !target.Held(obj) {
		t.Fatal("removal not requested or not held")
	}
	if (Target{Key: "m2"}).Held(obj) || (Target{Key: "m2"}).RemovalRequested(obj) {
		t.Fatal("m2 held or removed by m1's annotations")
	}
	gone := &metav1.ObjectMeta{DeletionTimestamp: &metav1.Time{}}
	if !target.RemovalRequested(gone) {
		t.Fatal("a deleted object does not request removal")
	}
	if target.LeaveRequested(gone) || !target.LeaveRequested(obj) {
		t.Fatal("a deleted object asked to leave, or one with the deletion annotation not")
	}
	odd := &metav1.ObjectMeta{
		Labels: map[string]string{"state.workload.custody.dev/m1": "Unknown"},
		Annotations: map[string]string{
			"deletion.internal.workload.custody.dev/m1": "",
			"finalizers.workload.custody.dev/m1":        " , ",
		},
	}
	if s, ok := target.State(odd); !ok || s != workloadv1alpha1.ResourceStatePending {
		t.Fatalf("an unknown state read as %q %v, want Pending", s, ok)
	}
	if !target.RemovalRequested(odd) {
		t.Fatal("an empty deletion annotation does not request removal")
	}
	if target.Held(odd) {
		t.Fatal("a finalizers annotation naming no finalizer holds the removal")
	}
}

func TestReportsStatus(t *testing.T) {
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"state.workload.custody.dev/m1": "Sync"}, true},
		{map[string]string{"state.workload.custody.dev/m1": "Sync", "state.workload.custody.dev/m2": "Sync"}, true},
		{map[string]string{"state.workload.custody.dev/m1": "Sync", "state.workload.custody.dev/a0": "Sync"}, false},
		{map[string]string{"state.workload.custody.dev/m1": "Sync", "state.workload.custody.dev/a0": ""}, true},
		{map[string]string{"state.workload.custody.dev/m1": "Upsync"}, false},
		{nil, false},
	} {
		if got := target.ReportsStatus(&metav1.ObjectMeta{Labels: tc.labels}); got != tc.want {
			t.Errorf("ReportsStatus(%v) = %v, want %v", tc.labels, got, tc.want)
		}
	}
}

func TestDownstreamStripsWhatMustNotCross(t *testing.T) {
	up := toUnstructured(t, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: "cfg", UID: "hub-uid", ResourceVersion: "42", Generation: 3,
			Finalizers:      []string{"workload.custody.dev/syncer-m1", "example.com/other"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: "pod-uid"}},
			Labels: map[string]string{
				"app": "web", "state.workload.custody.dev/m1": "Sync", "state.workload.custody.dev/m2": "",
			},
			Annotations: map[string]string{
				"note":                               "kept",
				"finalizers.workload.custody.dev/m1": "x",
				"deletion.internal.workload.custody.dev/m1": "2026-01-02T03:04:05Z",
				"pv.workload.custody.dev/m1":                "pvc-x",
				"pv.kubernetes.io/bind-completed":           "yes",
				"volume.kubernetes.io/selected-node":        "node-1",
				"storage.custody.dev/release-policy":        "Retain",
			},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
		},
		Data: map[string]string{"k": "v"},
	}, "v1", "ConfigMap")

	down, err := target.Downstream(up, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if down.GetNamespace() != target.Namespace("team-a") || down.GetName() != "cfg" {
		t.Fatalf("downstream key %s/%s", down.GetNamespace(), down.GetName())
	}
	wantLabels := map[string]string{"app": "web", TargetLabel: "m1", HubLabel: target.Hub}
	if !maps.Equal(down.GetLabels(), wantLabels) {
		t.Fatalf("labels %v, want %v", down.GetLabels(), wantLabels)
	}
	a := down.GetAnnotations()
	if a["note"] != "kept" || a[HubNamespaceAnnotation] != "team-a" || a[HubNameAnnotation] != "cfg" || a[AppliedAnnotation] == "" {
		t.Fatalf("annotations %v", a)
	}
	if len(a) != 4 {
		t.Fatalf("annotations that must not cross crossed: %v", a)
	}
	if down.GetUID() != "" || down.GetResourceVersion() != "" || down.GetGeneration() != 0 ||
		down.GetFinalizers() != nil || down.GetOwnerReferences() != nil || down.GetManagedFields() != nil {
		t.Fatalf("cluster-specific metadata crossed: %v", down.Object["metadata"])
	}
	if data, _, _ := unstructured.NestedStringMap(down.Object, "data"); !maps.Equal(data, map[string]string{"k": "v"}) {
		t.Fatalf("data %v", data)
	}
	if key, ok := target.Upstream(down, false); !ok || key != (types.NamespacedName{Namespace: "team-a", Name: "cfg"}) {
		t.Fatalf("upstream of the copy: %v %v", key, ok)
	}
	if _, ok := (Target{Key: "m1", Hub: "another-hub"}).Upstream(down, false); ok {
		t.Fatal("a syncer of another hub claims the copy")
	}
}

func TestDownstreamNamespace(t *testing.T) {
	up := toUnstructured(t, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "team-a", Labels: map[string]string{
			"state.workload.custody.dev/m1": "Sync", "tier": "gold", corev1.LabelMetadataName: "team-a",
		}},
		Spec:   corev1.NamespaceSpec{Finalizers: []corev1.FinalizerName{corev1.FinalizerKubernetes}},
		Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}, "v1", "Namespace")
	down, err := target.Downstream(up, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if down.GetName() != target.Namespace("team-a") || down.GetNamespace() != "" {
		t.Fatalf("downstream namespace %q/%q", down.GetNamespace(), down.GetName())
	}
	if _, ok := down.Object["spec"]; ok {
		t.Fatal("the namespace's spec crossed")
	}
	if _, ok := down.Object["status"]; ok {
		t.Fatal("the namespace's status crossed")
	}
	if _, ok := down.GetLabels()[corev1.LabelMetadataName]; ok {
		t.Fatal("the hub namespace's name label crossed: the member sets its own")
	}
	if down.GetLabels()["tier"] != "gold" || down.GetAnnotations()[HubNamespaceAnnotation] != "team-a" {
		t.Fatalf("metadata %v", down.Object["metadata"])
	}
	if key, ok := target.Upstream(down, true); !ok || key.Name != "team-a" {
		t.Fatalf("upstream of the namespace: %v %v", key, ok)
	}
}

func hubPV(annotations map[string]string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-hub", Annotations: annotations},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "team-a", Name: "data",
				UID: "hub-claim-uid", ResourceVersion: "7",
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
}

func TestDownstreamPVClaimRef(t *testing.T) {
	ns := target.Namespace("team-a")
	memberRef := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": "data", "uid": "member-uid", "resourceVersion": "99"}
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		current     map[string]any
		wantName    string
		wantRef     map[string]any
	}{{
		name:     "new copy: translated name, claim by namespace and name only",
		wantName: target.PVName("pvc-hub", nil),
		wantRef:  map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": "data"},
	}, {
		name:        "the member's own PV: recorded name, the binder's uid kept",
		annotations: map[string]string{workloadv1alpha1.PVNameAnnotation("m1"): "pvc-member", "pv.kubernetes.io/bound-by-controller": "yes"},
		current:     memberRef,
		wantName:    "pvc-member",
		wantRef:     memberRef,
	}, {
		name:     "a binding to another claim is not kept",
		current:  map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": "other", "uid": "u"},
		wantName: target.PVName("pvc-hub", nil),
		wantRef:  map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": ns, "name": "data"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			up := toUnstructured(t, hubPV(tc.annotations), "v1", "PersistentVolume")
			in := Inputs{}
			if tc.current != nil {
				in.Current = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"claimRef": tc.current}}}
			}
			down, err := target.Downstream(up, in)
			if err != nil {
				t.Fatal(err)
			}
			if down.GetName() != tc.wantName {
				t.Fatalf("name %q, want %q", down.GetName(), tc.wantName)
			}
			ref, _, _ := unstructured.NestedMap(down.Object, "spec", "claimRef")
			if !equality.Semantic.DeepEqual(ref, tc.wantRef) {
				t.Fatalf("claimRef %v, want %v", ref, tc.wantRef)
			}
			if _, ok := down.Object["status"]; ok {
				t.Fatal("status crossed")
			}
			for k := range down.GetAnnotations() {
				if k == "pv.kubernetes.io/bound-by-controller" || k == workloadv1alpha1.PVNameAnnotation("m1") {
					t.Fatalf("annotation %s crossed", k)
				}
			}
			if h, _, _ := unstructured.NestedString(down.Object, "spec", "csi", "volumeHandle"); h != "h" {
				t.Fatalf("volume handle %q", h)
			}
		})
	}
}

// A copy that the member's binder bound is still what the syncer applied: the binder's
// claimRef fields count in neither the hash nor the comparison, so it is not applied again.
func TestDownstreamPVBoundByTheMemberIsUpToDate(t *testing.T) {
	up := toUnstructured(t, hubPV(nil), "v1", "PersistentVolume")
	first, err := target.Downstream(up, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	bound := first.DeepCopy()
	if err := unstructured.SetNestedField(bound.Object, "member-uid", "spec", "claimRef", "uid"); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(bound.Object, "42", "spec", "claimRef", "resourceVersion"); err != nil {
		t.Fatal(err)
	}
	again, err := target.Downstream(up, Inputs{Current: bound})
	if err != nil {
		t.Fatal(err)
	}
	if !UpToDate(bound, again) {
		t.Fatalf("the bound copy is not up to date: applied %s, wanted %s",
			bound.GetAnnotations()[AppliedAnnotation], again.GetAnnotations()[AppliedAnnotation])
	}
	if uid, _, _ := unstructured.NestedString(again.Object, "spec", "claimRef", "uid"); uid != "member-uid" {
		t.Fatalf("the binder's uid was not kept: %q", uid)
	}
}

// A PV bound to a gone copy of its claim is applied again without the binder's fields, so
// that the member's binder binds the claim's next copy.
func TestDownstreamPVUnbind(t *testing.T) {
	up := toUnstructured(t, hubPV(nil), "v1", "PersistentVolume")
	first, err := target.Downstream(up, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	bound := first.DeepCopy()
	if err := unstructured.SetNestedField(bound.Object, "gone-copy-uid", "spec", "claimRef", "uid"); err != nil {
		t.Fatal(err)
	}
	again, err := target.Downstream(up, Inputs{Current: bound, Unbind: true})
	if err != nil {
		t.Fatal(err)
	}
	if UpToDate(bound, again) {
		t.Fatal("a copy bound to a gone claim copy counts as up to date")
	}
	if uid, found, _ := unstructured.NestedString(again.Object, "spec", "claimRef", "uid"); !found || uid != "" {
		t.Fatalf("the gone copy's uid is not cleared: %q", uid)
	}
	unbound := again.DeepCopy()
	unstructured.RemoveNestedField(unbound.Object, "spec", "claimRef", "uid")
	unstructured.RemoveNestedField(unbound.Object, "spec", "claimRef", "resourceVersion")
	if !UpToDate(unbound, again) {
		t.Fatal("the unbound copy is not up to date")
	}
}

func TestUnbinds(t *testing.T) {
	up := toUnstructured(t, hubPV(nil), "v1", "PersistentVolume")
	pv := func(phase corev1.PersistentVolumePhase, policy corev1.PersistentVolumeReclaimPolicy) *unstructured.Unstructured {
		p := hubPV(nil)
		p.Status.Phase, p.Spec.PersistentVolumeReclaimPolicy = phase, policy
		return toUnstructured(t, p, "v1", "PersistentVolume")
	}
	claim := func(uid, volume string, deleting bool) *unstructured.Unstructured {
		c := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data", UID: types.UID(uid)},
			Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: volume},
		}
		if deleting {
			c.DeletionTimestamp = &metav1.Time{Time: time.Now()}
		}
		return toUnstructured(t, c, "v1", "PersistentVolumeClaim")
	}
	released := pv(corev1.VolumeReleased, corev1.PersistentVolumeReclaimRetain)
	for _, tc := range []struct {
		name           string
		current, claim *unstructured.Unstructured
		want           bool
	}{
		{"released, kept, its claim back", released, claim("hub-claim-uid", "pvc-hub", false), true},
		{"still bound", pv(corev1.VolumeBound, corev1.PersistentVolumeReclaimRetain), claim("hub-claim-uid", "pvc-hub", false), false},
		{"released to be deleted: its storage goes", pv(corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), claim("hub-claim-uid", "pvc-hub", false), false},
		{"the claim is being deleted", released, claim("hub-claim-uid", "pvc-hub", true), false},
		{"the claim is gone", released, nil, false},
		{"a claim made again under the name names no volume", released, claim("hub-claim-uid", "", false), false},
		{"a claim of the name bound elsewhere", released, claim("hub-claim-uid", "pvc-other", false), false},
		{"another claim than the hub PV's", released, claim("other-uid", "pvc-hub", false), false},
		{"no copy", nil, claim("hub-claim-uid", "pvc-hub", false), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Unbinds(tc.current, up, tc.claim); got != tc.want {
				t.Fatalf("Unbinds = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDownstreamPVCVolumeName(t *testing.T) {
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-hub", StorageClassName: ptr.To("shared")},
	}
	up := toUnstructured(t, claim, "v1", "PersistentVolumeClaim")
	for _, volumeName := range []string{"", "custody-abc"} {
		down, err := target.Downstream(up, Inputs{VolumeName: volumeName})
		if err != nil {
			t.Fatal(err)
		}
		got, found, _ := unstructured.NestedString(down.Object, "spec", "volumeName")
		if got != volumeName || found != (volumeName != "") {
			t.Fatalf("volumeName %q (set %v), want %q", got, found, volumeName)
		}
	}
}

func TestDownstreamPVCRestore(t *testing.T) {
	for _, tc := range []struct {
		annotation string
		want       string
	}{
		{"", ""},
		{"m1/snap-1", "snap-1"},
		{"m2/snap-1", ""}, // another target's replica
		{"m1/", ""},
		{"snap-1", ""},
	} {
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data",
			Annotations: map[string]string{storagev1alpha1.RestoreAnnotation: tc.annotation}}}
		down, err := target.Downstream(toUnstructured(t, claim, "v1", "PersistentVolumeClaim"), Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"dataSourceRef", "dataSource"} {
			name, _, _ := unstructured.NestedString(down.Object, "spec", field, "name")
			kind, _, _ := unstructured.NestedString(down.Object, "spec", field, "kind")
			if name != tc.want || (tc.want != "" && kind != "VolumeSnapshot") {
				t.Errorf("%q: %s names %s %q, want VolumeSnapshot %q", tc.annotation, field, kind, name, tc.want)
			}
		}
	}
}

// A copy made from a replica keeps its data source, which cannot change, once the hub claim no
// longer asks for the restore and the copy is bound.
func TestDownstreamPVCKeepsDataSource(t *testing.T) {
	ref := map[string]any{"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot", "name": "snap-1"}
	current := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"dataSource": ref, "dataSourceRef": ref, "volumeName": "custody-abc"}}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-hub"}}
	down, err := target.Downstream(toUnstructured(t, claim, "v1", "PersistentVolumeClaim"), Inputs{VolumeName: "custody-abc", Current: current})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"dataSourceRef", "dataSource"} {
		if got, _, _ := unstructured.NestedMap(down.Object, "spec", field); !equality.Semantic.DeepEqual(got, ref) {
			t.Errorf("%s is %v, want %v", field, got, ref)
		}
	}
}

// A claim's copy is made in the class its volume has where it runs (the storage-class
// annotation a LocationPair's class map writes), and a copy that exists keeps its class.
func TestDownstreamPVCClass(t *testing.T) {
	for _, tc := range []struct {
		name, annotation, current string
		want                      any
	}{
		{"the class the claim names", "", "", "east"},
		{"the class mapped", "west", "", "west"},
		{"an existing copy keeps its class", "west", "east", "east"},
		{"a copy of the class mapped keeps it", "west", "west", "west"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To("east")}}
			if tc.annotation != "" {
				claim.Annotations = map[string]string{storagev1alpha1.StorageClassAnnotation: tc.annotation}
			}
			in := Inputs{}
			if tc.current != "" {
				in.Current = &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"storageClassName": tc.current}}}
			}
			down, err := target.Downstream(toUnstructured(t, claim, "v1", "PersistentVolumeClaim"), in)
			if err != nil {
				t.Fatal(err)
			}
			if got, _, _ := unstructured.NestedFieldNoCopy(down.Object, "spec", "storageClassName"); got != tc.want {
				t.Errorf("storageClassName %v, want %v", got, tc.want)
			}
		})
	}
}

func TestDownstreamServiceDropsAllocations(t *testing.T) {
	svc := func(clusterIP string) *corev1.Service {
		return &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "web"},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeNodePort, ClusterIP: clusterIP, ClusterIPs: []string{clusterIP},
				IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
				Ports:      []corev1.ServicePort{{Name: "http", Port: 80, NodePort: 30080}},
				Selector:   map[string]string{"app": "web"},
			},
		}
	}
	down, err := target.Downstream(toUnstructured(t, svc("10.0.0.7"), "v1", "Service"), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range [][]string{{"spec", "clusterIP"}, {"spec", "clusterIPs"}, {"spec", "ipFamilies"}} {
		if _, found, _ := unstructured.NestedFieldNoCopy(down.Object, f...); found {
			t.Fatalf("%v crossed", f)
		}
	}
	ports, _, _ := unstructured.NestedSlice(down.Object, "spec", "ports")
	if _, ok := ports[0].(map[string]any)["nodePort"]; ok || ports[0].(map[string]any)["port"] != int64(80) {
		t.Fatalf("ports %v", ports)
	}
	headless, err := target.Downstream(toUnstructured(t, svc(corev1.ClusterIPNone), "v1", "Service"), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if ip, _, _ := unstructured.NestedString(headless.Object, "spec", "clusterIP"); ip != corev1.ClusterIPNone {
		t.Fatalf("headless clusterIP %q", ip)
	}
}

func TestPlacePods(t *testing.T) {
	targetTol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "custody", Effect: corev1.TaintEffectNoSchedule}
	userTol := corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](30), Effect: corev1.TaintEffectNoExecute}
	in := Inputs{NodeSelector: map[string]string{"zone": "a", "disk": "ssd"}, Tolerations: []corev1.Toleration{targetTol}}
	user := corev1.PodSpec{
		NodeSelector: map[string]string{"disk": "hdd"},
		Tolerations:  []corev1.Toleration{userTol, targetTol},
		Containers:   []corev1.Container{{Name: "c", Image: "busybox"}},
	}
	template := corev1.PodTemplateSpec{Spec: user}
	cases := []struct {
		apiVersion, kind string
		obj              runtime.Object
		path             []string
	}{
		{"v1", "Pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "p"}, Spec: user}, []string{"spec"}},
		{"apps/v1", "Deployment", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": mustMap(t, &template)}}}, []string{"spec", "template", "spec"}},
		{"batch/v1", "CronJob", &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"jobTemplate": map[string]any{"spec": map[string]any{"template": mustMap(t, &template)}}}}}, []string{"spec", "jobTemplate", "spec", "template", "spec"}},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			var up *unstructured.Unstructured
			if u, ok := tc.obj.(*unstructured.Unstructured); ok {
				up = u
				up.SetAPIVersion(tc.apiVersion)
				up.SetKind(tc.kind)
				up.SetNamespace("n")
				up.SetName("x")
			} else {
				up = toUnstructured(t, tc.obj, tc.apiVersion, tc.kind)
			}
			down, err := target.Downstream(up, in)
			if err != nil {
				t.Fatal(err)
			}
			raw, _, _ := unstructured.NestedMap(down.Object, tc.path...)
			got := corev1.PodSpec{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &got); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got.NodeSelector, map[string]string{"zone": "a", "disk": "hdd"}) {
				t.Fatalf("node selector %v: the user's keys must win", got.NodeSelector)
			}
			if !equality.Semantic.DeepEqual(got.Tolerations, []corev1.Toleration{userTol, targetTol}) {
				t.Fatalf("tolerations %v", got.Tolerations)
			}
			if len(got.Containers) != 1 || got.Containers[0].Image != "busybox" {
				t.Fatalf("containers %v", got.Containers)
			}
		})
	}
	t.Run("an existing Pod keeps its placement", func(t *testing.T) {
		up := toUnstructured(t, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "p"}, Spec: user}, "v1", "Pod")
		current := toUnstructured(t, &corev1.Pod{Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"old": "pool"},
			Tolerations:  []corev1.Toleration{userTol},
		}}, "v1", "Pod")
		down, err := target.Downstream(up, Inputs{Current: current, NodeSelector: in.NodeSelector, Tolerations: in.Tolerations})
		if err != nil {
			t.Fatal(err)
		}
		got := corev1.Pod{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(down.Object, &got); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Spec.NodeSelector, map[string]string{"old": "pool"}) || len(got.Spec.Tolerations) != 1 {
			t.Fatalf("placement changed on an existing Pod: %v %v", got.Spec.NodeSelector, got.Spec.Tolerations)
		}
	})
	t.Run("no pod template", func(t *testing.T) {
		cm := toUnstructured(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "c"}}, "v1", "ConfigMap")
		down, err := target.Downstream(cm, in)
		if err != nil {
			t.Fatal(err)
		}
		if _, found := down.Object["spec"]; found {
			t.Fatal("placement added a spec to a ConfigMap")
		}
	})
}

func mustMap(t *testing.T, obj any) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestContains(t *testing.T) {
	for _, tc := range []struct {
		name       string
		have, want any
		ok         bool
	}{
		{"equal scalars", "a", "a", true},
		{"different scalars", "a", "b", false},
		{"numbers of different Go types", int64(3), float64(3), true},
		{"extra keys from defaulting", map[string]any{"a": "1", "b": "2"}, map[string]any{"a": "1"}, true},
		{"missing key", map[string]any{"b": "2"}, map[string]any{"a": "1"}, false},
		{"null matches absent", map[string]any{}, map[string]any{"a": nil, "b": map[string]any{}}, true},
		{"an empty string matches absent", map[string]any{}, map[string]any{"uid": ""}, true},
		{"an empty string does not match a value", map[string]any{"uid": "u"}, map[string]any{"uid": ""}, false},
		{"list items with defaulted fields", []any{map[string]any{"name": "c", "policy": "Always"}}, []any{map[string]any{"name": "c"}}, true},
		{"list of another length", []any{"a", "b"}, []any{"a"}, false},
		{"changed list item", []any{map[string]any{"name": "d"}}, []any{map[string]any{"name": "c"}}, false},
		{"map where a list is wanted", map[string]any{}, []any{"a"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Contains(tc.have, tc.want); got != tc.ok {
				t.Fatalf("Contains(%v, %v) = %v", tc.have, tc.want, got)
			}
		})
	}
}

func TestSameStatus(t *testing.T) {
	unused := func(at, status string) map[string]any {
		return map[string]any{"type": "Unused", "status": status, "reason": "NoPodsUsingPVC", "lastTransitionTime": at, "lastProbeTime": nil}
	}
	bound := func(conditions ...any) map[string]any {
		s := map[string]any{"phase": "Bound", "capacity": map[string]any{"storage": "1Gi"}}
		if conditions != nil {
			s["conditions"] = conditions
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		hub, down any
		same      bool
	}{
		{"equal", bound(), bound(), true},
		{"a condition's times differ", bound(unused("2026-11-28T15:23:20Z", "True")), bound(unused("2026-11-28T15:23:33Z", "True")), true},
		{"a condition's status differs", bound(unused("2026-11-28T15:23:20Z", "True")), bound(unused("2026-11-28T15:23:20Z", "False")), false},
		{"a condition is new", bound(), bound(unused("2026-11-28T15:23:33Z", "True")), false},
		{"a condition went", bound(unused("2026-11-28T15:23:20Z", "True")), bound(), false},
		{"the phase differs", bound(), map[string]any{"phase": "Lost", "capacity": map[string]any{"storage": "1Gi"}}, false},
		{"no status on the hub yet", nil, bound(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SameStatus(tc.hub, tc.down); got != tc.same {
				t.Fatalf("SameStatus(%v, %v) = %v", tc.hub, tc.down, got)
			}
		})
	}
}

func TestUpToDate(t *testing.T) {
	cm := func(data map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"namespace": "team-a", "name": "cfg"}, "data": data,
		}}
	}
	desired, err := target.Downstream(cm(map[string]any{"a": "1"}), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	current := desired.DeepCopy()
	current.SetResourceVersion("5")
	current.SetUID("member-uid")
	if !UpToDate(current, desired) {
		t.Fatal("an applied copy with server fields is not up to date")
	}
	drifted := current.DeepCopy()
	drifted.Object["data"] = map[string]any{"a": "changed downstream"}
	if UpToDate(drifted, desired) {
		t.Fatal("a copy changed downstream is up to date")
	}
	removed, err := target.Downstream(cm(map[string]any{}), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if UpToDate(current, removed) {
		t.Fatal("a key removed upstream still counts as up to date")
	}
}

func TestUpsyncPV(t *testing.T) {
	member := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name: "pvc-member-uid", UID: "member-pv-uid", ResourceVersion: "12",
			Labels: map[string]string{"topology": "zone-a"},
			Annotations: map[string]string{
				"pv.kubernetes.io/provisioned-by":      "shared.storage.sim.custody.dev",
				"pv.kubernetes.io/bound-by-controller": "yes",
			},
			Finalizers: []string{"kubernetes.io/pv-protection"},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "shared",
			ClaimRef: &corev1.ObjectReference{
				APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: target.Namespace("team-a"), Name: "data",
				UID: "member-claim-uid", ResourceVersion: "8",
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "shared.storage.sim.custody.dev", VolumeHandle: "shared-123", VolumeAttributes: map[string]string{"domain": "shared"},
			}},
		},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound},
	}
	claim := &metav1.ObjectMeta{Namespace: "team-a", Name: "data", UID: "hub-claim-uid"}
	hubClaim := types.NamespacedName{Namespace: "team-a", Name: "data"}
	target.MarkOrigin(member, "pvc-hub-claim-uid", hubClaim)
	hub := target.UpsyncPV(member, claim)

	if !target.MarkedOrigin(member, "pvc-hub-claim-uid", hubClaim) || target.MarkedOrigin(member, "pvc-other", hubClaim) {
		t.Fatalf("marks %v", member.Annotations)
	}
	if key, ok := target.Upstream(member, false); !ok || key != (types.NamespacedName{Name: "pvc-hub-claim-uid"}) {
		t.Fatalf("the marked member PV stands for %v (%v)", key, ok)
	}
	for _, other := range []Target{{Key: "m2", Hub: target.Hub}, {Key: target.Key, Hub: "another-hub"}} {
		if other.IsOrigin(member) {
			t.Fatalf("the PV counts as upsynced by %+v", other)
		}
	}

	if hub.Name != "pvc-hub-claim-uid" || hub.UID != "" || hub.ResourceVersion != "" || hub.Finalizers != nil {
		t.Fatalf("metadata %+v", hub.ObjectMeta)
	}
	if !maps.Equal(hub.Labels, map[string]string{"topology": "zone-a", "state.workload.custody.dev/m1": "Upsync"}) {
		t.Fatalf("labels %v", hub.Labels)
	}
	wantAnnotations := map[string]string{
		"pv.kubernetes.io/provisioned-by": "shared.storage.sim.custody.dev",
		"pv.workload.custody.dev/m1":      "pvc-member-uid",
	}
	if !maps.Equal(hub.Annotations, wantAnnotations) {
		t.Fatalf("annotations %v, want %v", hub.Annotations, wantAnnotations)
	}
	wantRef := &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "team-a", Name: "data"}
	if !equality.Semantic.DeepEqual(hub.Spec.ClaimRef, wantRef) {
		t.Fatalf("claimRef %+v", hub.Spec.ClaimRef)
	}
	if !equality.Semantic.DeepEqual(hub.Spec.CSI, member.Spec.CSI) || hub.Spec.StorageClassName != "shared" ||
		hub.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete || hub.Status.Phase != corev1.VolumeBound {
		t.Fatalf("spec %+v status %+v", hub.Spec, hub.Status)
	}
	if member.Spec.ClaimRef.UID != "member-claim-uid" {
		t.Fatal("UpsyncPV changed the member's PV")
	}
}

func TestKeepProvisioned(t *testing.T) {
	provisioned := func(policy corev1.PersistentVolumeReclaimPolicy, annotations map[string]string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-member-uid", Annotations: annotations},
			Spec:       corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: policy},
		}
	}
	claim := &metav1.ObjectMeta{Namespace: "team-a", Name: "data", UID: "hub-claim-uid"}

	pv := provisioned(corev1.PersistentVolumeReclaimDelete, nil)
	if !KeepProvisioned(pv) || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Fatalf("a PV provisioned Delete was not kept: %s", pv.Spec.PersistentVolumeReclaimPolicy)
	}
	if pv.Annotations[ProvisionedPolicyAnnotation] != string(corev1.PersistentVolumeReclaimDelete) {
		t.Fatalf("the policy it came with is lost: %v", pv.Annotations)
	}
	if got := target.UpsyncPV(pv, claim).Spec.PersistentVolumeReclaimPolicy; got != corev1.PersistentVolumeReclaimDelete {
		t.Fatalf("the hub records %s, not the policy the PV was provisioned with", got)
	}
	if KeepProvisioned(pv) {
		t.Fatal("a PV kept already changed again")
	}

	retained := provisioned(corev1.PersistentVolumeReclaimRetain, nil)
	if KeepProvisioned(retained) || retained.Annotations != nil {
		t.Fatalf("a PV provisioned Retain changed: %v", retained.Annotations)
	}
	if got := target.UpsyncPV(retained, claim).Spec.PersistentVolumeReclaimPolicy; got != corev1.PersistentVolumeReclaimRetain {
		t.Fatalf("the hub records %s for a PV provisioned Retain", got)
	}

	released := provisioned(corev1.PersistentVolumeReclaimDelete, map[string]string{storagev1alpha1.ReleasePolicyAnnotation: string(corev1.PersistentVolumeReclaimDelete)})
	if KeepProvisioned(released) || released.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		t.Fatal("the policy the syncer gave a PV to release it was undone")
	}
}

func TestDownstreamJobDropsTheGeneratedSelector(t *testing.T) {
	generated := map[string]string{"controller-uid": "hub-uid", "batch.kubernetes.io/controller-uid": "hub-uid", "job-name": "once"}
	job := func(manual bool) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"namespace": "team-a", "name": "once"},
			"spec": map[string]any{
				"manualSelector": manual,
				"selector":       map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "hub-uid"}},
				"template":       map[string]any{"metadata": map[string]any{"labels": mustMap(t, &metav1.ObjectMeta{Labels: generated})["labels"]}},
			},
		}}
	}
	down, err := target.Downstream(job(false), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(down.Object, "spec", "selector"); found {
		t.Fatal("the hub's generated selector crossed")
	}
	labels, _, _ := unstructured.NestedStringMap(down.Object, "spec", "template", "metadata", "labels")
	if !maps.Equal(labels, map[string]string{"job-name": "once"}) {
		t.Fatalf("template labels %v", labels)
	}
	manual, err := target.Downstream(job(true), Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(manual.Object, "spec", "selector"); !found {
		t.Fatal("a manual selector was dropped")
	}
}

func TestCopyReclaimPolicy(t *testing.T) {
	released := &unstructured.Unstructured{Object: map[string]any{}}
	released.SetAnnotations(map[string]string{storagev1alpha1.ReleasePolicyAnnotation: "Delete"})
	for _, tc := range []struct {
		name    string
		current *unstructured.Unstructured
		want    corev1.PersistentVolumeReclaimPolicy
	}{
		{"a new copy is Retain", nil, corev1.PersistentVolumeReclaimRetain},
		{"a copy without a release policy is Retain", &unstructured.Unstructured{Object: map[string]any{}}, corev1.PersistentVolumeReclaimRetain},
		{"a copy being released keeps its release policy", released, corev1.PersistentVolumeReclaimDelete},
	} {
		if got := CopyReclaimPolicy(tc.current); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// The member's StatefulSet controller must not own or delete the claims the syncer makes:
// the hub carries out the set's retention policy.
func TestDownstreamStatefulSetRetainsItsClaims(t *testing.T) {
	up := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "StatefulSet",
		"metadata": map[string]any{"name": "web", "namespace": "team-a"},
		"spec":     map[string]any{"persistentVolumeClaimRetentionPolicy": map[string]any{"whenDeleted": "Delete", "whenScaled": "Delete"}},
	}}
	down, err := target.Downstream(up, Inputs{})
	if err != nil {
		t.Fatal(err)
	}
	policy, _, _ := unstructured.NestedStringMap(down.Object, "spec", "persistentVolumeClaimRetentionPolicy")
	if want := map[string]string{"whenDeleted": "Retain", "whenScaled": "Retain"}; !maps.Equal(policy, want) {
		t.Fatalf("retention policy %v, want %v", policy, want)
	}
	if kept, _, _ := unstructured.NestedStringMap(up.Object, "spec", "persistentVolumeClaimRetentionPolicy"); kept["whenDeleted"] != "Delete" {
		t.Fatalf("the hub object changed: %v", kept)
	}
}

func TestOrigin(t *testing.T) {
	hubClaim := types.NamespacedName{Namespace: "team-a", Name: "data"}
	marked := func(tg Target) *metav1.ObjectMeta {
		pv := &metav1.ObjectMeta{Name: "pvc-member"}
		tg.MarkOrigin(pv, "pvc-hub", hubClaim)
		return pv
	}
	copied := &metav1.ObjectMeta{Name: "custody-x", Labels: target.Markers(), Annotations: map[string]string{HubNameAnnotation: "pvc-hub"}}
	for _, tc := range []struct {
		name                 string
		pv                   metav1.Object
		ok                   bool
		wantHubPV, wantClaim types.NamespacedName
	}{
		{"provisioned by the member, upsynced", marked(target), true, types.NamespacedName{Name: "pvc-hub"}, hubClaim},
		{"a copy the syncer made", copied, false, types.NamespacedName{}, types.NamespacedName{}},
		{"upsynced by another target", marked(Target{Key: "m2", Hub: target.Hub}), false, types.NamespacedName{}, types.NamespacedName{}},
		{"upsynced for another hub", marked(Target{Key: target.Key, Hub: "another-hub"}), false, types.NamespacedName{}, types.NamespacedName{}},
		{"unmarked", &metav1.ObjectMeta{Name: "pvc-member"}, false, types.NamespacedName{}, types.NamespacedName{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hubPV, claim, ok := target.Origin(tc.pv)
			if ok != tc.ok || ok && (hubPV != tc.wantHubPV || claim != tc.wantClaim) {
				t.Fatalf("Origin = %v %v %v, want %v %v %v", hubPV, claim, ok, tc.wantHubPV, tc.wantClaim, tc.ok)
			}
		})
	}
}

func TestClaimOf(t *testing.T) {
	pv := func(ref map[string]any) *unstructured.Unstructured {
		u := Empty(PVGVK)
		if ref != nil {
			u.Object["spec"] = map[string]any{"claimRef": ref}
		}
		return u
	}
	for _, tc := range []struct {
		name string
		pv   *unstructured.Unstructured
		want types.NamespacedName
		ok   bool
	}{
		{"bound", pv(map[string]any{"kind": "PersistentVolumeClaim", "namespace": "team-a", "name": "data", "uid": "u"}), types.NamespacedName{Namespace: "team-a", Name: "data"}, true},
		{"no claimRef", pv(nil), types.NamespacedName{}, false},
		{"a claimRef naming no claim", pv(map[string]any{"namespace": "team-a"}), types.NamespacedName{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := ClaimOf(tc.pv); ok != tc.ok || ok && got != tc.want {
				t.Fatalf("ClaimOf = %v %v, want %v %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestReleasePolicy(t *testing.T) {
	claim := func(policy string, deleting bool) *unstructured.Unstructured {
		u := Empty(PVCGVK)
		if policy != "" {
			u.SetAnnotations(map[string]string{storagev1alpha1.ReleasePolicyAnnotation: policy})
		}
		if deleting {
			u.SetDeletionTimestamp(&metav1.Time{Time: time.Now()})
		}
		return u
	}
	for _, tc := range []struct {
		name  string
		claim *unstructured.Unstructured
		want  corev1.PersistentVolumeReclaimPolicy
	}{
		{"a claim staying", claim("", false), corev1.PersistentVolumeReclaimRetain},
		{"a deleted claim coordination gave a policy", claim("Delete", true), corev1.PersistentVolumeReclaimDelete},
		{"a deleted claim without a policy", claim("", true), corev1.PersistentVolumeReclaimRetain},
		{"a policy on a claim not deleted: it only moves", claim("Delete", false), corev1.PersistentVolumeReclaimRetain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ReleasePolicy(tc.claim); got != tc.want {
				t.Fatalf("ReleasePolicy = %s, want %s", got, tc.want)
			}
		})
	}
}

// The packed objects of the syncer's caches read their labels and annotations in place.
var _ entryReader = &packedcache.Object{}

// TestPackedReading checks that a packed object reads as the Unstructured it was packed from.
func TestPackedReading(t *testing.T) {
	pv := Empty(PVGVK)
	pv.SetName("pvc-member")
	pv.SetLabels(map[string]string{"state.workload.custody.dev/m1": "Sync"})
	pv.SetAnnotations(map[string]string{"deletion.internal.workload.custody.dev/m1": ""})
	target.MarkOrigin(pv, "pvc-hub", types.NamespacedName{Namespace: "team-a", Name: "data"})
	obj, err := packedcache.Pack(pv.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	packed := obj.(*packedcache.Object)
	for _, read := range []func(metav1.Object) any{
		func(o metav1.Object) any { key, ok := target.Upstream(o, false); return []any{key, ok} },
		func(o metav1.Object) any { hubPV, claim, ok := target.Origin(o); return []any{hubPV, claim, ok} },
		func(o metav1.Object) any { s, ok := target.State(o); return []any{s, ok} },
		func(o metav1.Object) any {
			return []any{target.Owns(o), target.RemovalRequested(o), target.LeaveRequested(o)}
		},
		func(o metav1.Object) any { v, ok := Annotation(o, "missing"); return []any{v, ok} },
	} {
		if got, want := read(packed), read(pv); !equality.Semantic.DeepEqual(got, want) {
			t.Errorf("packed read %v, want %v", got, want)
		}
	}
}
