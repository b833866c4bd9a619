package app

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
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
