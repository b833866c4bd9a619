package dr

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// ImageTime is when the data of the destination's latest image was taken, nil before it
// reported one. A destination's sync starts when it listens again after the one before, up to
// an interval before the source's sync that it receives starts; the source's last sync, when
// it started no later than the destination's last sync completed, is that one or an earlier
// one, and bounds the image's time closer. A source that moved away since is not taken.
func ImageTime(vr *storagev1alpha1.VolumeReplication) *metav1.Time {
	dst, src := vr.Status.Destination, vr.Status.Source
	if dst == nil || dst.LatestImageTime == nil {
		return nil
	}
	t := *dst.LatestImageTime
	if src == nil || src.LastSyncTime == nil || dst.LastSyncTime == nil || workloadv1alpha1.ToSyncTargetKey(src.ReportedBy) != vr.Spec.Source {
		return &t
	}
	// To the second below, as the API keeps times: the time is recorded and compared.
	start := src.LastSyncStart().Truncate(time.Second)
	if start.After(t.Time) && !start.After(dst.LastSyncTime.Time) {
		t = metav1.NewTime(start)
	}
	return &t
}
