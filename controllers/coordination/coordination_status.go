package coordination

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination"
)

// maxTransitions bounds the history kept on a VolumeOwnership.
const maxTransitions = 32

func nowTime() metav1.Time { return metav1.NewTime(time.Now().Truncate(time.Second)) }

// apply writes the decision into the status and tells whether the phase, owner or reason
// changed, which is then a transition worth an event and a line of history.
func apply(st *storagev1alpha1.VolumeOwnershipStatus, d coordination.Decision, volume, class string, now metav1.Time) bool {
	changed := st.Phase != d.Phase || st.Owner != d.Owner || st.Reason != d.Reason
	if st.Phase != d.Phase || st.PhaseSince == nil {
		st.PhaseSince = &now
	}
	st.Class, st.Domain, st.Phase, st.Owner = d.Class, d.Domain, d.Phase, d.Owner
	st.Sharers, st.Reclaim, st.Reason, st.Message = d.Sharers, d.Reclaim, d.Reason, d.Message
	st.VolumeName, st.StorageClassName = volume, class
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
