package coordination

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestFenceDelay(t *testing.T) {
	lease := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr.To[int32](2)}}
	own := &workloadv1alpha1.SyncTarget{Spec: workloadv1alpha1.SyncTargetSpec{FenceDelay: &metav1.Duration{Duration: time.Minute}}}
	plain := &workloadv1alpha1.SyncTarget{}
	for _, tt := range []struct {
		name   string
		r      Reconciler
		target *workloadv1alpha1.SyncTarget
		want   time.Duration
	}{
		{"the target's own delay wins over the controller's", Reconciler{FenceDelay: time.Hour}, own, time.Minute},
		{"the controller's delay", Reconciler{FenceDelay: time.Hour}, plain, time.Hour},
		{"three graces of three announced periods", Reconciler{}, plain, 18 * time.Second},
		{"three of the configured grace", Reconciler{HeartbeatGrace: 5 * time.Second}, plain, 15 * time.Second},
	} {
		if got := tt.r.fenceDelay(tt.target, lease); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}
