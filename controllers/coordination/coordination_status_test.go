package coordination

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination"
)

func TestConditions(t *testing.T) {
	const yes, no = metav1.ConditionTrue, metav1.ConditionFalse
	tests := []struct {
		phase              storagev1alpha1.VolumePhase
		reason             string
		ready, progressing metav1.ConditionStatus
	}{
		{storagev1alpha1.Pending, storagev1alpha1.ReasonWaitingForPlacement, no, no},
		{storagev1alpha1.Provisioning, storagev1alpha1.ReasonProvisioning, no, yes},
		{storagev1alpha1.Upsyncing, storagev1alpha1.ReasonBinding, no, yes},
		{storagev1alpha1.Bound, storagev1alpha1.ReasonInUse, yes, no},
		{storagev1alpha1.Bound, storagev1alpha1.ReasonMoved, yes, no},
		{storagev1alpha1.Bound, storagev1alpha1.ReasonStorageClassMismatch, no, no},
		{storagev1alpha1.Bound, storagev1alpha1.ReasonMultipleHolders, no, no},
		{storagev1alpha1.Moving, storagev1alpha1.ReasonWaitingForDetach, no, yes},
		{storagev1alpha1.Moving, storagev1alpha1.ReasonWaitingForFence, no, yes},
		{storagev1alpha1.Deleting, storagev1alpha1.ReasonReleasing, no, yes},
		{storagev1alpha1.Released, storagev1alpha1.ReasonReleased, no, no},
		{storagev1alpha1.Released, "", no, no},
	}
	for _, tt := range tests {
		got := conditions(coordination.Decision{Phase: tt.phase, Reason: tt.reason, Message: "m"})
		if got[0].Type != storagev1alpha1.ConditionReady || got[0].Status != tt.ready ||
			got[1].Type != storagev1alpha1.ConditionProgressing || got[1].Status != tt.progressing {
			t.Errorf("%s/%s: Ready %s, Progressing %s; want %s, %s", tt.phase, tt.reason, got[0].Status, got[1].Status, tt.ready, tt.progressing)
		}
		for _, c := range got {
			if c.Reason == "" || c.Message != "m" {
				t.Errorf("%s/%s: condition %s without a reason or message", tt.phase, tt.reason, c.Type)
			}
		}
	}
}

func TestRecordDecisionKeepsEarlierSetAside(t *testing.T) {
	first := storagev1alpha1.SetAsideVolume{Driver: "east.csi", VolumeHandle: "vol-1", Domain: "east", Target: "m1"}
	second := storagev1alpha1.SetAsideVolume{Driver: "west.csi", VolumeHandle: "vol-2", Domain: "west", Target: "m2"}
	st := &storagev1alpha1.VolumeOwnershipStatus{}
	now := metav1.Now()
	for _, d := range []*storagev1alpha1.SetAsideVolume{nil, &first, &first, &second, &second} {
		recordDecision(st, coordination.Decision{Phase: storagev1alpha1.Restoring, SetAside: d}, "pvc-1", "standard", now)
	}
	if st.SetAside == nil || st.SetAside.VolumeHandle != "vol-2" {
		t.Fatalf("set aside %+v, want vol-2", st.SetAside)
	}
	if len(st.EarlierSetAside) != 1 || st.EarlierSetAside[0].VolumeHandle != "vol-1" {
		t.Fatalf("earlier set aside %+v, want vol-1 alone", st.EarlierSetAside)
	}
}

// A volume handed over from its fenced owner in one step is a move started and completed.
func TestTransitionCountsAHandOver(t *testing.T) {
	m := newVolumeMetrics()
	started, completed := testutil.ToFloat64(movesStarted), testutil.ToFloat64(movesCompleted)
	m.transition(storagev1alpha1.VolumeOwnershipStatus{Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonInUse, Owner: "a"},
		storagev1alpha1.VolumeOwnershipStatus{Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonMoved, Owner: "b", FencedOff: []string{"a"}},
		time.Now().Add(-time.Minute))
	if got := testutil.ToFloat64(movesStarted) - started; got != 1 {
		t.Errorf("moves started: %v, want 1", got)
	}
	if got := testutil.ToFloat64(movesCompleted) - completed; got != 1 {
		t.Errorf("moves completed: %v, want 1", got)
	}
}
