package coordination

import (
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination"
)

// maxTransitions bounds the history kept on a VolumeOwnership.
const maxTransitions = 32

func nowTime() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// recordDecision writes the decision into the status and tells whether the phase, owner or
// reason changed, which is then a transition worth an event and a line of history.
func recordDecision(st *storagev1alpha1.VolumeOwnershipStatus, d coordination.Decision, volume, class string, now metav1.Time) bool {
	changed := st.Phase != d.Phase || st.Owner != d.Owner || st.Reason != d.Reason
	if st.Phase != d.Phase || st.PhaseSince == nil {
		st.PhaseSince = &now
	}
	st.Class, st.Domain, st.Phase, st.Owner = d.Class, d.Domain, d.Phase, d.Owner
	st.Sharers, st.Reclaim, st.Reason, st.Message = d.Sharers, d.Reclaim, d.Reason, d.Message
	if a := st.SetAside; a != nil && (d.SetAside == nil || a.Driver != d.SetAside.Driver || a.VolumeHandle != d.SetAside.VolumeHandle) {
		// Another restore set the restored volume aside in its turn: the one before stays
		// listed, its storage kept.
		st.EarlierSetAside = append(st.EarlierSetAside, *a)
	}
	st.FencedOff, st.RestoredFrom, st.SetAside = d.FencedOff, d.RestoredFrom, d.SetAside
	st.VolumeName, st.StorageClassName = volume, class
	for _, c := range conditions(d) {
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if changed {
		st.Transitions = append(st.Transitions, storagev1alpha1.Transition{
			Phase: d.Phase, Time: now, Owner: d.Owner, Reason: d.Reason, Message: d.Message,
		})
		if n := len(st.Transitions); n > maxTransitions {
			st.Transitions = slices.Clone(st.Transitions[n-maxTransitions:])
		}
	}
	return changed
}

// conditions says the decision as the record's conditions: Ready while the volume is in use
// where its namespace runs, Progressing while provisioning, a move or a deletion is under way.
func conditions(d coordination.Decision) []metav1.Condition {
	ready := d.Phase == storagev1alpha1.Bound && (d.Reason == storagev1alpha1.ReasonInUse || d.Reason == storagev1alpha1.ReasonMoved)
	progressing := d.Phase == storagev1alpha1.Provisioning || d.Phase == storagev1alpha1.Upsyncing ||
		d.Phase == storagev1alpha1.Moving || d.Phase == storagev1alpha1.Deleting
	reason := d.Reason
	if reason == "" {
		reason = string(d.Phase) // a condition needs a reason; every phase is one word
	}
	return []metav1.Condition{
		{Type: storagev1alpha1.ConditionReady, Status: conditionStatus(ready), Reason: reason, Message: d.Message},
		{Type: storagev1alpha1.ConditionProgressing, Status: conditionStatus(progressing), Reason: reason, Message: d.Message},
	}
}

func conditionStatus(b bool) metav1.ConditionStatus {
	if b {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}
