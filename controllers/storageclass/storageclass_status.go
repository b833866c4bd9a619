package storageclass

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/storageclass"
)

// maxMessage bounds a condition message so that, with recoveredPrefix, it fits an event's
// note, which the API server caps at 1 KiB, whatever the Location's size.
const maxMessage = 960

// recoveredPrefix starts the note of the event that a return to True records.
const recoveredPrefix = "Volumes may move again: "

// condition is the Location's StorageClassesCompatible condition, given every SyncTarget.
// A target whose syncer has not reported yet is named but not compared: its classes are not
// missing, only unknown, and a target just joined would otherwise raise a Warning.
func condition(loc *schedulingv1alpha1.Location, all []workloadv1alpha1.SyncTarget) metav1.Condition {
	c := metav1.Condition{Type: schedulingv1alpha1.ConditionStorageClassesCompatible, ObservedGeneration: loc.Generation}
	members, err := loc.Targets(all)
	if err != nil {
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, schedulingv1alpha1.ReasonInvalidSelector, "the instance selector does not parse"
		return c
	}
	var reported []storageclass.Target
	var awaiting []string
	for _, t := range members {
		switch {
		case !t.DeletionTimestamp.IsZero():
		case !t.Reported():
			awaiting = append(awaiting, t.Name)
		default:
			reported = append(reported, storageclass.Target{Name: t.Name, Classes: t.Status.StorageClasses})
		}
	}
	if len(reported) == 0 && len(awaiting) > 0 {
		c.Status, c.Reason = metav1.ConditionUnknown, schedulingv1alpha1.ReasonStorageClassesNotReported
		c.Message = summary([]string{"no target has reported its classes yet: " + strings.Join(awaiting, ", ")})
		return c
	}
	r := storageclass.Compare(reported)
	refusals, differences := r.Refusals(), r.Differences()
	if d := r.DefaultsDiffer(); d != "" {
		refusals = append(refusals, d)
	}
	switch {
	case len(refusals) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, schedulingv1alpha1.ReasonStorageClassMissing, summary(refusals)
		switch {
		case slices.ContainsFunc(r.Mismatches, func(m storageclass.Mismatch) bool { return m.Field.RefusesMoves() }):
			c.Reason = schedulingv1alpha1.ReasonStorageClassMismatch
		case len(r.Missing) == 0:
			c.Reason = schedulingv1alpha1.ReasonDefaultStorageClassMismatch
		}
	case len(differences) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassSettingsDiffer, summary(differences)
	default:
		c.Status, c.Reason = metav1.ConditionTrue, schedulingv1alpha1.ReasonStorageClassesMatch
		c.Message = fmt.Sprintf("every class is alike on every target (classes: %d, targets: %d)", len(r.Classes), len(r.Targets))
	}
	if len(awaiting) > 0 {
		c.Message = summary([]string{c.Message, "not compared until they report: " + strings.Join(awaiting, ", ")})
	}
	return c
}

// summary joins the lines while they fit in maxMessage, and counts those left out.
func summary(lines []string) string {
	if all := strings.Join(lines, "; "); len(all) <= maxMessage {
		return all
	}
	budget := maxMessage - len(fmt.Sprintf("; and %d more", len(lines)))
	var kept []string
	for _, l := range lines {
		if len(strings.Join(append(slices.Clip(kept), l), "; ")) > budget {
			break
		}
		kept = append(kept, l)
	}
	if len(kept) == 0 {
		kept = []string{truncate(lines[0], budget)}
	}
	out := strings.Join(kept, "; ")
	if left := len(lines) - len(kept); left > 0 {
		out += fmt.Sprintf("; and %d more", left)
	}
	return out
}

// truncate cuts s to at most n bytes, on a rune boundary, and marks the cut.
func truncate(s string, n int) string {
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

type locationEvent struct {
	eventType string
	note      string
}

// eventFor says which event, if any, a change of the condition from old calls for: a Warning
// each time it turns False or, while False, names other problems; a Normal event when it
// turns True after False.
func eventFor(old *metav1.Condition, cur metav1.Condition) (locationEvent, bool) {
	wasFalse := old != nil && old.Status == metav1.ConditionFalse
	switch {
	case cur.Status == metav1.ConditionFalse && (!wasFalse || old.Message != cur.Message):
		return locationEvent{corev1.EventTypeWarning, cur.Message}, true
	case cur.Status == metav1.ConditionTrue && wasFalse:
		return locationEvent{corev1.EventTypeNormal, recoveredPrefix + cur.Message}, true
	}
	return locationEvent{}, false
}
