package replication

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/custody-dev/custody/api"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
)

// TestReportsOnlyWhatTheStatusDoesNotSay: a side's report is applied only when the status, as
// the API server stores it, says something else. The image's time, computed to the
// nanosecond, is stored to the second: a report of the same image again writes nothing.
func TestReportsOnlyWhatTheStatusDoesNotSay(t *testing.T) {
	ctx := context.Background()
	applies := 0
	r := &Reconciler{Clients: syncio.Clients{Hub: fakeHub(api.NewScheme(), &applies)}, SyncTargetName: "m2"}

	synced := metav1.NewTime(time.Date(2026, 12, 3, 7, 35, 4, 0, time.UTC))
	image := func(kept bool) *storagev1alpha1.ReplicationDestinationStatus {
		return &storagev1alpha1.ReplicationDestinationStatus{ReportedBy: "m2", Address: "dst.m2", Port: 8000, LastSyncTime: &synced,
			LatestImage: "image-1", LatestImageReady: true, LatestImageKept: kept,
			LatestImageTime: &metav1.Time{Time: synced.Add(-57600 * time.Millisecond)}}
	}
	waiting := &storagev1alpha1.ReplicationSourceStatus{ReportedBy: "m1", Message: "waiting for the destination m2 to report its address"}
	// The VolumeReplication as the cache holds it, once the API server stored the reports.
	vr := stored(t, &storagev1alpha1.VolumeReplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
		Status:     storagev1alpha1.VolumeReplicationStatus{Source: waiting, Destination: image(false)},
	})

	for _, c := range []struct {
		name   string
		report storagev1alpha1.VolumeReplicationStatus
		writes int
	}{
		{"the same image, its time to the nanosecond", storagev1alpha1.VolumeReplicationStatus{Destination: image(false)}, 0},
		{"the same wait for the destination", storagev1alpha1.VolumeReplicationStatus{Source: waiting}, 0},
		{"the image kept", storagev1alpha1.VolumeReplicationStatus{Destination: image(true)}, 1},
		{"a side the status has not", storagev1alpha1.VolumeReplicationStatus{Source: &storagev1alpha1.ReplicationSourceStatus{ReportedBy: "m2"}}, 1},
	} {
		applies = 0
		if err := r.report(ctx, vr, c.report); err != nil {
			t.Fatal(err)
		}
		if applies != c.writes {
			t.Errorf("%s: %d status applies, want %d", c.name, applies, c.writes)
		}
	}
}

// stored is vr as the API server gives it back: through its JSON, times to the second.
func stored(t *testing.T, vr *storagev1alpha1.VolumeReplication) *storagev1alpha1.VolumeReplication {
	t.Helper()
	b, err := json.Marshal(vr)
	if err != nil {
		t.Fatal(err)
	}
	out := &storagev1alpha1.VolumeReplication{}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// fakeHub is a hub holding objs whose status applies, which the fake client does not take,
// are counted in applies and dropped.
func fakeHub(scheme *runtime.Scheme, applies *int, objs ...client.Object) client.Client {
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		SubResourceApply: func(context.Context, client.Client, string, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
			*applies++
			return nil
		},
	}).Build()
}
