package dr

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func TestImageTime(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(s int) *metav1.Time { return &metav1.Time{Time: base.Add(time.Duration(s) * time.Second)} }
	// The destination listened from 0 s; the source's sync started at 60 s, and both completed
	// at 62 s.
	dst := &storagev1alpha1.ReplicationDestinationStatus{LatestImage: "img", LatestImageTime: at(0), LastSyncTime: at(62)}
	// A source's sync that took took seconds and a half.
	src := func(reportedBy string, end, took int) *storagev1alpha1.ReplicationSourceStatus {
		return &storagev1alpha1.ReplicationSourceStatus{ReportedBy: reportedBy, LastSyncTime: at(end),
			LastSyncDuration: &metav1.Duration{Duration: time.Duration(took)*time.Second + 500*time.Millisecond}}
	}
	for _, c := range []struct {
		name string
		st   storagev1alpha1.VolumeReplicationStatus
		want *metav1.Time
	}{
		{"no image yet", storagev1alpha1.VolumeReplicationStatus{Source: src("m1", 62, 2)}, nil},
		{"no source report: the destination's start", storagev1alpha1.VolumeReplicationStatus{Destination: dst}, at(0)},
		{"the source's sync that made the image, to the second below", storagev1alpha1.VolumeReplicationStatus{Source: src("m1", 62, 1), Destination: dst}, at(60)},
		{"the source's sync ended after the destination's", storagev1alpha1.VolumeReplicationStatus{Source: src("m1", 63, 2), Destination: dst}, at(60)},
		{"a later sync of the source, not in the image", storagev1alpha1.VolumeReplicationStatus{Source: src("m1", 122, 2), Destination: dst}, at(0)},
		{"an earlier sync of the source than the destination's start", storagev1alpha1.VolumeReplicationStatus{Source: src("m1", -1, 2), Destination: dst}, at(0)},
		{"a source that moved away", storagev1alpha1.VolumeReplicationStatus{Source: src("m3", 62, 2), Destination: dst}, at(0)},
	} {
		vr := &storagev1alpha1.VolumeReplication{Spec: storagev1alpha1.VolumeReplicationSpec{Source: "m1", Destination: "m2"}, Status: c.st}
		got := ImageTime(vr)
		if (got == nil) != (c.want == nil) || got != nil && !got.Equal(c.want) {
			t.Errorf("%s: ImageTime = %v, want %v", c.name, got, c.want)
		}
	}
}
