package location

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestCountChangedOnlyByLabelsAndAvailability(t *testing.T) {
	base := func() *workloadv1alpha1.SyncTarget {
		st := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{"loc": "a"}}}
		st.Status.Conditions = []metav1.Condition{{Type: workloadv1alpha1.ConditionReady, Status: metav1.ConditionTrue}}
		return st
	}
	for _, tc := range []struct {
		name   string
		change func(*workloadv1alpha1.SyncTarget)
		want   bool
	}{
		{"a label", func(t *workloadv1alpha1.SyncTarget) { t.Labels["loc"] = "b" }, true},
		{"cordoned", func(t *workloadv1alpha1.SyncTarget) { t.Spec.Unschedulable = true }, true},
		{"not Ready", func(t *workloadv1alpha1.SyncTarget) { t.Status.Conditions[0].Status = metav1.ConditionFalse }, true},
		{"its priority", func(t *workloadv1alpha1.SyncTarget) { t.Spec.Priority = 5 }, false},
		{"its storage classes", func(t *workloadv1alpha1.SyncTarget) {
			t.Status.StorageClasses = []workloadv1alpha1.StorageClassInfo{{Name: "fast"}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := countChanged(base(), n); got != tc.want {
				t.Errorf("countChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
