package app

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func TestDescribeVolume(t *testing.T) {
	moving := &storagev1alpha1.VolumeOwnership{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data"},
		Status: storagev1alpha1.VolumeOwnershipStatus{
			Class: storagev1alpha1.Owned, StorageClassName: "fast", Domain: "east", VolumeName: "pv-data",
			Owner: "t1", Phase: storagev1alpha1.Moving, PhaseSince: ago(5*time.Minute + 30*time.Second),
			Reclaim: storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain},
			Reason:  storagev1alpha1.ReasonWaitingForDetach, Message: "waiting for t1 to let go of the volume",
			Transitions: []storagev1alpha1.Transition{
				{Phase: storagev1alpha1.Provisioning, Time: *ago(26 * time.Hour), Owner: "t1", Reason: storagev1alpha1.ReasonProvisioning, Message: "provisioning on t1"},
				{Phase: storagev1alpha1.Bound, Time: *ago(25 * time.Hour), Owner: "t1", Reason: storagev1alpha1.ReasonInUse},
				{Phase: storagev1alpha1.Moving, Time: *ago(5*time.Minute + 30*time.Second), Owner: "t1", Reason: storagev1alpha1.ReasonWaitingForDetach, Message: "waiting for t1 to let go of the volume"},
			},
		},
	}
	for _, tc := range []struct {
		name string
		v    *storagev1alpha1.VolumeOwnership
		want string
	}{
		{"moving", moving, "" +
			"Name:              data\n" +
			"Namespace:         shop\n" +
			"Class:             Owned\n" +
			"StorageClass:      fast\n" +
			"Domain:            east\n" +
			"Volume:            pv-data\n" +
			"Owner:             t1\n" +
			"Sharers:           <none>\n" +
			"Phase:             Moving\n" +
			"Since:             2026-07-01T11:54:30Z (5m30s ago)\n" +
			"Reclaim:           Retain\n" +
			"Original Reclaim:  Delete\n" +
			"Reason:            WaitingForDetach\n" +
			"Message:           waiting for t1 to let go of the volume\n" +
			"Transitions:\n" +
			"  Time                  Phase         Owner  Reason            Message\n" +
			"  ----                  -----         -----  ------            -------\n" +
			"  2026-06-30T10:00:00Z  Provisioning  t1     Provisioning      provisioning on t1\n" +
			"  2026-06-30T11:00:00Z  Bound         t1     InUse             <none>\n" +
			"  2026-07-01T11:54:30Z  Moving        t1     WaitingForDetach  waiting for t1 to let go of the volume\n"},
		{"not yet seen", &storagev1alpha1.VolumeOwnership{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "new"},
			Status:     storagev1alpha1.VolumeOwnershipStatus{Sharers: []string{"t2", "t3"}},
		}, "" +
			"Name:              new\n" +
			"Namespace:         shop\n" +
			"Class:             <none>\n" +
			"StorageClass:      <none>\n" +
			"Domain:            <none>\n" +
			"Volume:            <none>\n" +
			"Owner:             <none>\n" +
			"Sharers:           t2,t3\n" +
			"Phase:             <none>\n" +
			"Since:             <unknown>\n" +
			"Reclaim:           <none>\n" +
			"Original Reclaim:  <none>\n" +
			"Reason:            <none>\n" +
			"Message:           <none>\n" +
			"Transitions:       <none>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := describeVolume(&out, tc.v, now); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}

func TestVolumeKey(t *testing.T) {
	for _, tc := range []struct {
		arg, ns  string
		explicit bool
		want     client.ObjectKey
		err      string
	}{
		{arg: "shop/data", ns: "default", want: client.ObjectKey{Namespace: "shop", Name: "data"}},
		{arg: "data", ns: "shop", want: client.ObjectKey{Namespace: "shop", Name: "data"}},
		{arg: "shop/data", ns: "shop", explicit: true, want: client.ObjectKey{Namespace: "shop", Name: "data"}},
		{arg: "data.v2", ns: "shop", explicit: true, want: client.ObjectKey{Namespace: "shop", Name: "data.v2"}},
		{arg: "shop/data", ns: "web", explicit: true, err: `volume "shop/data" is not in namespace "web" given by --namespace`},
		{arg: "shop/data/x", ns: "default", err: `invalid volume "shop/data/x": give NAMESPACE/NAME or NAME`},
		{arg: "/data", ns: "default", err: `invalid volume "/data": give NAMESPACE/NAME or NAME`},
		{arg: "shop/", ns: "default", err: `invalid volume "shop/": give NAMESPACE/NAME or NAME`},
		{arg: "", ns: "default", err: `invalid volume "": give NAMESPACE/NAME or NAME`},
		{arg: "Shop/data", ns: "default", err: `invalid volume "Shop/data": namespace "Shop": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{arg: "shop/data_1", ns: "default", err: `invalid volume "shop/data_1": name "data_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	} {
		key, err := volumeKey(tc.arg, tc.ns, tc.explicit)
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("volumeKey(%q, %q, %t): error %v, want %s", tc.arg, tc.ns, tc.explicit, err, tc.err)
		case tc.err == "" && (err != nil || key != tc.want):
			t.Errorf("volumeKey(%q, %q, %t) = %v, %v; want %v", tc.arg, tc.ns, tc.explicit, key, err, tc.want)
		}
	}
}
