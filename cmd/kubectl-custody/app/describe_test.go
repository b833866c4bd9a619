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
			"Name:               data\n" +
			"Namespace:          shop\n" +
			"Class:              Owned\n" +
			"StorageClass:       fast\n" +
			"Domain:             east\n" +
			"Volume:             pv-data\n" +
			"Owner:              t1\n" +
			"Sharers:            <none>\n" +
			"Fenced Off:         <none>\n" +
			"Replica:            <none>\n" +
			"Restored From:      <none>\n" +
			"Set Aside:          <none>\n" +
			"Earlier Set Aside:  <none>\n" +
			"Phase:              Moving\n" +
			"Since:              2026-07-01T11:54:30Z (5m30s ago)\n" +
			"Reclaim:            Retain\n" +
			"Original Reclaim:   Delete\n" +
			"Reason:             WaitingForDetach\n" +
			"Message:            waiting for t1 to let go of the volume\n" +
			"Conditions:         <none>\n" +
			"Transitions:\n" +
			"  Time                  Phase         Owner  Reason            Message\n" +
			"  ----                  -----         -----  ------            -------\n" +
			"  2026-06-30T10:00:00Z  Provisioning  t1     Provisioning      provisioning on t1\n" +
			"  2026-06-30T11:00:00Z  Bound         t1     InUse             <none>\n" +
			"  2026-07-01T11:54:30Z  Moving        t1     WaitingForDetach  waiting for t1 to let go of the volume\n"},
		{"not yet seen", &storagev1alpha1.VolumeOwnership{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "new"},
			Status: storagev1alpha1.VolumeOwnershipStatus{Sharers: []string{"t2", "t3"}, FencedOff: []string{"t4"},
				Replica:      &storagev1alpha1.Replica{Target: "w1", Snapshot: "snap-2", Time: *ago(time.Minute)},
				RestoredFrom: &storagev1alpha1.Replica{Target: "w1", Snapshot: "snap-1", Time: *ago(time.Hour)},
				SetAside: &storagev1alpha1.SetAsideVolume{Driver: "sim.csi", VolumeHandle: "vol-1", Domain: "east", Target: "e1",
					For: storagev1alpha1.Replica{Target: "w1", Snapshot: "snap-1", Time: *ago(time.Hour)}, Time: *ago(30 * time.Minute)},
				EarlierSetAside: []storagev1alpha1.SetAsideVolume{
					{Driver: "sim.csi", VolumeHandle: "vol-0", Domain: "west", Target: "w1", Time: *ago(50 * time.Minute)},
					{Driver: "sim.csi", VolumeHandle: "vol-00", Domain: "east", Target: "e2", Time: *ago(40 * time.Minute)}},
				Conditions: []metav1.Condition{{Type: storagev1alpha1.ConditionReplicated, Status: metav1.ConditionTrue, Reason: "Replicated", Message: "latest replica snap-2 on w1"}}},
		}, "" +
			"Name:               new\n" +
			"Namespace:          shop\n" +
			"Class:              <none>\n" +
			"StorageClass:       <none>\n" +
			"Domain:             <none>\n" +
			"Volume:             <none>\n" +
			"Owner:              <none>\n" +
			"Sharers:            t2,t3\n" +
			"Fenced Off:         t4\n" +
			"Replica:            snapshot snap-2 on w1, taken 2026-07-01T11:59:00Z (60s ago)\n" +
			"Restored From:      snapshot snap-1 on w1, taken 2026-07-01T11:00:00Z (60m ago)\n" +
			"Set Aside:          sim.csi vol-1 in storage domain east, last on e1, since 2026-07-01T11:30:00Z (30m ago); kept, not released\n" +
			"Earlier Set Aside:  sim.csi vol-0 in storage domain west, last on w1, since 2026-07-01T11:10:00Z (50m ago); kept, not released; " +
			"sim.csi vol-00 in storage domain east, last on e2, since 2026-07-01T11:20:00Z (40m ago); kept, not released\n" +
			"Phase:              <none>\n" +
			"Since:              <unknown>\n" +
			"Reclaim:            <none>\n" +
			"Original Reclaim:   <none>\n" +
			"Reason:             <none>\n" +
			"Message:            <none>\n" +
			"Conditions:\n" +
			"  Type        Status  Reason      Message\n" +
			"  ----        ------  ------      -------\n" +
			"  Replicated  True    Replicated  latest replica snap-2 on w1\n" +
			"Transitions:  <none>\n"},
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

func TestDescribeFence(t *testing.T) {
	fenced := fenceOf("m1", "east", storagev1alpha1.Network, storagev1alpha1.Unfenced, storagev1alpha1.FenceStatus{
		Phase: storagev1alpha1.FenceFenced, Executor: "m2", Reason: "WaitingForClean",
		Message: "m1 stays fenced off east until its syncer is back and reports that it holds nothing it should not",
		NetworkFence: &storagev1alpha1.NetworkFenceStatus{
			ClassName: "rbd", CIDRs: []string{"10.0.1.0/24", "10.0.2.0/24"}, ReportedBy: "m2",
			FenceState: storagev1alpha1.Fenced, Result: "Succeeded", Message: "fencing operation successful",
		},
		RequestedTime: ago(26 * time.Hour), FencedTime: ago(25 * time.Hour), UnfencingTime: ago(5*time.Minute + 30*time.Second),
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionFalse, Reason: "WaitingForClean", Message: "m1 stays fenced"}},
	})
	micro := func(d time.Duration) metav1.MicroTime { return metav1.NewMicroTime(ago(d).Time) }
	events := []corev1.Event{
		// As the events.k8s.io recorder writes them, newest first to check the order.
		{Type: corev1.EventTypeNormal, Reason: "Fenced", Message: "Fenced: m1 is fenced off east by a NetworkFence in m2", ReportingController: "custody-fencing", EventTime: micro(25 * time.Hour)},
		{Type: corev1.EventTypeWarning, Reason: "NetworkFenceFailed", Message: "Failed: the NetworkFence in m2 failed: timeout", ReportingController: "custody-fencing",
			EventTime: micro(26 * time.Hour), Series: &corev1.EventSeries{Count: 3, LastObservedTime: micro(25*time.Hour + 30*time.Minute)}},
		{Type: corev1.EventTypeNormal, Reason: "Executing", Message: "Fencing: m2 executes a NetworkFence (Fenced) for m1", Source: corev1.EventSource{Component: "custody-fencing"},
			LastTimestamp: *ago(26 * time.Hour)},
	}
	for _, tc := range []struct {
		name   string
		f      storagev1alpha1.Fence
		events []corev1.Event
		want   string
	}{
		{"held, waiting for clean", fenced, events, "" +
			"Name:       m1.east\n" +
			"Target:     m1\n" +
			"Domain:     east\n" +
			"Mode:       Network\n" +
			"State:      Unfenced\n" +
			"Held By:    <none>\n" +
			"Phase:      Fenced\n" +
			"Executor:   m2\n" +
			"Reason:     WaitingForClean\n" +
			"Message:    m1 stays fenced off east until its syncer is back and reports that it holds nothing it should not\n" +
			"Requested:  2026-06-30T10:00:00Z (26h ago)\n" +
			"Fenced:     2026-06-30T11:00:00Z (25h ago)\n" +
			"Unfencing:  2026-07-01T11:54:30Z (5m30s ago)\n" +
			"Unfenced:   <none>\n" +
			"Network Fence:\n" +
			"  Class:        rbd\n" +
			"  CIDRs:        10.0.1.0/24,10.0.2.0/24\n" +
			"  Reported By:  m2\n" +
			"  Fence State:  Fenced\n" +
			"  Result:       Succeeded\n" +
			"  Message:      fencing operation successful\n" +
			"Conditions:\n" +
			"  Type   Status  Reason           Message\n" +
			"  ----   ------  ------           -------\n" +
			"  Ready  False   WaitingForClean  m1 stays fenced\n" +
			"Events:\n" +
			"  Type     Reason              Age  From             Message\n" +
			"  ----     ------              ---  ----             -------\n" +
			"  Normal   Executing           26h  custody-fencing  Fencing: m2 executes a NetworkFence (Fenced) for m1\n" +
			"  Warning  NetworkFenceFailed  25h  custody-fencing  Failed: the NetworkFence in m2 failed: timeout\n" +
			"  Normal   Fenced              25h  custody-fencing  Fenced: m1 is fenced off east by a NetworkFence in m2\n"},
		{"not yet seen", fenceOf("m4", "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}), nil, "" +
			"Name:           m4.east\n" +
			"Target:         m4\n" +
			"Domain:         east\n" +
			"Mode:           Manual\n" +
			"State:          Fenced\n" +
			"Held By:        <none>\n" +
			"Phase:          <none>\n" +
			"Executor:       <none>\n" +
			"Reason:         <none>\n" +
			"Message:        <none>\n" +
			"Requested:      <none>\n" +
			"Fenced:         <none>\n" +
			"Unfencing:      <none>\n" +
			"Unfenced:       <none>\n" +
			"Network Fence:  <none>\n" +
			"Conditions:     <none>\n" +
			"Events:         <none>\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := describeFence(&out, &tc.f, tc.events, now); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", out.String(), tc.want)
			}
		})
	}
}
