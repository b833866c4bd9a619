package storageclass

import (
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func syncTarget(name, loc string, classes ...workloadv1alpha1.StorageClassInfo) workloadv1alpha1.SyncTarget {
	return workloadv1alpha1.SyncTarget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"loc": loc}},
		Status:     workloadv1alpha1.SyncTargetStatus{StorageClasses: classes, SyncedResources: []string{"persistentvolumeclaims"}},
	}
}

func class(name, provisioner string) workloadv1alpha1.StorageClassInfo {
	return workloadv1alpha1.StorageClassInfo{Name: name, Provisioner: provisioner}
}

func TestCondition(t *testing.T) {
	deleting := syncTarget("t0", "a", class("fast", "other"))
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	deleting.Finalizers = []string{"x"}
	retain := class("fast", "p")
	retain.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	fastDefault, slowDefault := class("fast", "p"), class("slow", "q")
	fastDefault.Default, slowDefault.Default = true, true

	tests := []struct {
		name     string
		selector metav1.LabelSelector
		targets  []workloadv1alpha1.SyncTarget
		want     metav1.Condition
	}{
		{
			name:    "no targets",
			targets: nil,
			want:    metav1.Condition{Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonStorageClassesMatch, Message: "every class is alike on every target (classes: 0, targets: 0)"},
		},
		{
			name:    "match",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p"), class("slow", "q")), syncTarget("t2", "a", class("slow", "q"), class("fast", "p"))},
			want:    metav1.Condition{Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonStorageClassesMatch, Message: "every class is alike on every target (classes: 2, targets: 2)"},
		},
		{
			name:    "targets of other Locations and targets being deleted are left out",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), syncTarget("t2", "b", class("fast", "other")), deleting},
			want:    metav1.Condition{Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonStorageClassesMatch, Message: "every class is alike on every target (classes: 1, targets: 1)"},
		},
		{
			name:    "a target that has not reported is named, not compared",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), {ObjectMeta: metav1.ObjectMeta{Name: "t2", Labels: map[string]string{"loc": "a"}}}},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonStorageClassesMatch,
				Message: "every class is alike on every target (classes: 1, targets: 1); not compared until they report: t2"},
		},
		{
			name:    "no target has reported",
			targets: []workloadv1alpha1.SyncTarget{{ObjectMeta: metav1.ObjectMeta{Name: "t1", Labels: map[string]string{"loc": "a"}}}},
			want: metav1.Condition{Status: metav1.ConditionUnknown, Reason: schedulingv1alpha1.ReasonStorageClassesNotReported,
				Message: "no target has reported its classes yet: t1"},
		},
		{
			name:    "settings differ",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), syncTarget("t2", "a", retain)},
			want: metav1.Condition{Status: metav1.ConditionTrue, Reason: schedulingv1alpha1.ReasonStorageClassSettingsDiffer,
				Message: `class "fast" differs in reclaimPolicy: "Delete" on t1; "Retain" on t2`},
		},
		{
			name:    "mismatch",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), syncTarget("t2", "a", class("fast", "q"))},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonStorageClassMismatch,
				Message: `class "fast" differs in provisioner: "p" on t1; "q" on t2`},
		},
		{
			name:    "missing",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), syncTarget("t2", "a")},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonStorageClassMissing,
				Message: `class "fast" is missing on t2 (present on t1)`},
		},
		{
			name: "a mismatch outranks a missing class in the reason; the message names both",
			targets: []workloadv1alpha1.SyncTarget{
				syncTarget("t1", "a", class("fast", "p"), class("gold", "g")), syncTarget("t2", "a", class("fast", "q")),
			},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonStorageClassMismatch,
				Message: `class "fast" differs in provisioner: "p" on t1; "q" on t2; class "gold" is missing on t2 (present on t1)`},
		},
		{
			name:    "default classes differ",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", fastDefault, class("slow", "q")), syncTarget("t2", "a", class("fast", "p"), slowDefault)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonDefaultStorageClassMismatch,
				Message: `the default class differs: "fast" on t1; "slow" on t2; volumes of claims that name no class do not move between those targets`},
		},
		{
			name:    "a missing class outranks differing defaults in the reason; the message names both",
			targets: []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", fastDefault), syncTarget("t2", "a", class("fast", "p"), slowDefault)},
			want: metav1.Condition{Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonStorageClassMissing,
				Message: `class "slow" is missing on t1 (present on t2); the default class differs: "fast" on t1; "slow" on t2; volumes of claims that name no class do not move between those targets`},
		},
		{
			name:     "the selector does not parse",
			selector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "loc", Operator: "Bad"}}},
			targets:  []workloadv1alpha1.SyncTarget{syncTarget("t1", "a", class("fast", "p")), syncTarget("t2", "a", class("fast", "q"))},
			want: metav1.Condition{Status: metav1.ConditionUnknown, Reason: schedulingv1alpha1.ReasonInvalidSelector,
				Message: "the instance selector does not parse"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel := tt.selector
			if sel.MatchExpressions == nil {
				sel.MatchLabels = map[string]string{"loc": "a"}
			}
			loc := &schedulingv1alpha1.Location{
				ObjectMeta: metav1.ObjectMeta{Name: "a", Generation: 3},
				Spec:       schedulingv1alpha1.LocationSpec{InstanceSelector: sel},
			}
			tt.want.Type, tt.want.ObservedGeneration = schedulingv1alpha1.ConditionStorageClassesCompatible, 3
			if got := condition(loc, tt.targets); got != tt.want {
				t.Fatalf("condition:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestSummary(t *testing.T) {
	line := func(i int) string { return strings.Repeat("x", 100) + string(rune('a'+i)) }
	var many []string
	for i := range 20 {
		many = append(many, line(i))
	}
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{name: "fits", lines: []string{"a", "b"}, want: "a; b"},
		{name: "exactly fits", lines: []string{strings.Repeat("y", maxMessage)}, want: strings.Repeat("y", maxMessage)},
		{
			name:  "too many lines: the first ones and a count",
			lines: many,
			want:  strings.Join(many[:9], "; ") + "; and 11 more",
		},
		{
			name:  "one line too long: cut on a rune boundary",
			lines: []string{strings.Repeat("é", maxMessage)},
			want:  strings.Repeat("é", (maxMessage-len("; and 1 more")-len("…"))/2) + "…",
		},
		{
			name:  "a first line too long, and more",
			lines: []string{strings.Repeat("z", maxMessage), "b"},
			want:  strings.Repeat("z", maxMessage-len("; and 2 more")-len("…")) + "…; and 1 more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summary(tt.lines)
			if got != tt.want {
				t.Fatalf("summary:\n got %q\nwant %q", got, tt.want)
			}
			if len(got) > maxMessage || !utf8.ValidString(got) {
				t.Fatalf("summary is %d bytes (max %d), valid UTF-8: %v", len(got), maxMessage, utf8.ValidString(got))
			}
		})
	}
}

func TestEventFor(t *testing.T) {
	cond := func(status metav1.ConditionStatus, message string) *metav1.Condition {
		return &metav1.Condition{Status: status, Message: message}
	}
	tests := []struct {
		name      string
		old       *metav1.Condition
		cur       *metav1.Condition
		want      locationEvent
		wantEvent bool
	}{
		{name: "first False", cur: cond(metav1.ConditionFalse, "m"), want: locationEvent{corev1.EventTypeWarning, "m"}, wantEvent: true},
		{name: "True to False", old: cond(metav1.ConditionTrue, "ok"), cur: cond(metav1.ConditionFalse, "m"), want: locationEvent{corev1.EventTypeWarning, "m"}, wantEvent: true},
		{name: "Unknown to False", old: cond(metav1.ConditionUnknown, "u"), cur: cond(metav1.ConditionFalse, "m"), want: locationEvent{corev1.EventTypeWarning, "m"}, wantEvent: true},
		{name: "False with other problems", old: cond(metav1.ConditionFalse, "m"), cur: cond(metav1.ConditionFalse, "n"), want: locationEvent{corev1.EventTypeWarning, "n"}, wantEvent: true},
		{name: "False unchanged", old: cond(metav1.ConditionFalse, "m"), cur: cond(metav1.ConditionFalse, "m")},
		{name: "False to True", old: cond(metav1.ConditionFalse, "m"), cur: cond(metav1.ConditionTrue, "ok"), want: locationEvent{corev1.EventTypeNormal, recoveredPrefix + "ok"}, wantEvent: true},
		{name: "first True", cur: cond(metav1.ConditionTrue, "ok")},
		{name: "True with other settings", old: cond(metav1.ConditionTrue, "ok"), cur: cond(metav1.ConditionTrue, "differ")},
		{name: "False to Unknown", old: cond(metav1.ConditionFalse, "m"), cur: cond(metav1.ConditionUnknown, "u")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := eventFor(tt.old, *tt.cur)
			if ok != tt.wantEvent || got != tt.want {
				t.Fatalf("eventFor = %+v, %v; want %+v, %v", got, ok, tt.want, tt.wantEvent)
			}
		})
	}
}
