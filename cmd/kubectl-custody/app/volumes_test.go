package app

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestVolumeTable(t *testing.T) {
	items := []storagev1alpha1.VolumeOwnership{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data"}, Status: storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Owned, StorageClassName: "fast", Domain: "east", VolumeName: "pv-data",
			Owner: "t1", Phase: storagev1alpha1.Moving, PhaseSince: ago(5*time.Minute + 30*time.Second),
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonWaitingForDetach,
		}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "assets"}, Status: storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Shared, StorageClassName: "nfs", Domain: "east", VolumeName: "pv-assets",
			Owner: "t1", Sharers: []string{"t2", "t3"}, Phase: storagev1alpha1.Bound, PhaseSince: ago(26 * time.Hour),
			Reclaim: storagev1alpha1.ReclaimStatus{Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonInUse,
		}},
		// Not yet seen by the coordinator.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: "new"}},
	}
	for _, tc := range []struct {
		name, format  string
		allNamespaces bool
		want          string
	}{
		{"default", "", false, "" +
			"NAME     CLASS    OWNER    SHARERS   PHASE    SINCE       RECLAIM\n" +
			"data     Owned    t1       <none>    Moving   5m30s       Retain\n" +
			"assets   Shared   t1       t2,t3     Bound    26h         Retain\n" +
			"new      <none>   <none>   <none>    <none>   <unknown>   <none>\n"},
		{"every namespace", "", true, "" +
			"NAMESPACE   NAME     CLASS    OWNER    SHARERS   PHASE    SINCE       RECLAIM\n" +
			"shop        data     Owned    t1       <none>    Moving   5m30s       Retain\n" +
			"web         assets   Shared   t1       t2,t3     Bound    26h         Retain\n" +
			"web         new      <none>   <none>   <none>    <none>   <unknown>   <none>\n"},
		{"wide", "wide", false, "" +
			"NAME     CLASS    OWNER    SHARERS   PHASE    SINCE       RECLAIM   STORAGECLASS   DOMAIN   VOLUME      REASON\n" +
			"data     Owned    t1       <none>    Moving   5m30s       Retain    fast           east     pv-data     WaitingForDetach\n" +
			"assets   Shared   t1       t2,t3     Bound    26h         Retain    nfs            east     pv-assets   InUse\n" +
			"new      <none>   <none>   <none>    <none>   <unknown>   <none>    <none>         <none>   <none>      <none>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut := printed(t, tc.format, listing{table: volumeTable(items, now), allNamespaces: tc.allNamespaces})
			if out != tc.want || errOut != "" {
				t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %q", out, tc.want, errOut)
			}
		})
	}
}

func TestRetainedVolumes(t *testing.T) {
	pv := func(name string, phase corev1.PersistentVolumePhase, claimNS string, labels map[string]string) corev1.PersistentVolume {
		p := corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.PersistentVolumeStatus{Phase: phase}}
		if claimNS != "" {
			p.Spec.ClaimRef = &corev1.ObjectReference{Namespace: claimNS, Name: "data"}
		}
		return p
	}
	pvs := []corev1.PersistentVolume{
		pv("kept-shop", corev1.VolumeReleased, "shop", nil),
		pv("kept-web", corev1.VolumeReleased, "web", nil),
		pv("in-use", corev1.VolumeBound, "shop", map[string]string{workloadv1alpha1.StateLabel("t1"): "Sync"}),
		pv("released-on-a-target", corev1.VolumeReleased, "shop", map[string]string{workloadv1alpha1.StateLabel("t1"): "Sync"}),
		pv("no-claim", corev1.VolumeReleased, "", nil),
	}
	for _, tc := range []struct {
		ns   string
		want []string
	}{
		{"shop", []string{"kept-shop"}},
		{"", []string{"kept-shop", "kept-web"}},
		{"other", nil},
	} {
		var got []string
		for _, p := range retainedVolumes(pvs, tc.ns) {
			got = append(got, p.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("namespace %q: %v, want %v", tc.ns, got, tc.want)
		}
	}
}

func TestRetainedTable(t *testing.T) {
	pvs := []corev1.PersistentVolume{
		{ObjectMeta: metav1.ObjectMeta{Name: "pvc-1f2e", Annotations: map[string]string{
			storagev1alpha1.DomainAnnotation: "east", storagev1alpha1.LastOwnerAnnotation: "t1"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
				StorageClassName: "fast",
				ClaimRef:         &corev1.ObjectReference{Namespace: "shop", Name: "data"},
			},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased, LastPhaseTransitionTime: ago(3*time.Hour + 20*time.Minute)}},
		// Kept for an internal volume whose domain and time of release are unknown.
		{ObjectMeta: metav1.ObjectMeta{Name: "pvc-9a0b", Annotations: map[string]string{storagev1alpha1.LastOwnerAnnotation: "t3"}},
			Spec:   corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "web", Name: "cache"}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}},
	}
	want := "" +
		"NAME       CLAIM       CAPACITY   STORAGECLASS   DOMAIN   LAST OWNER   SINCE\n" +
		"pvc-1f2e   shop/data   10Gi       fast           east     t1           3h20m\n" +
		"pvc-9a0b   web/cache   <none>     <none>         <none>   t3           <unknown>\n"
	out, errOut := printed(t, "", listing{table: retainedTable(pvs, now)})
	if out != want || errOut != "" {
		t.Errorf("stdout:\n%s\nwant:\n%s\nstderr: %q", out, want, errOut)
	}
}
