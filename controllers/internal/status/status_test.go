package status

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCondition(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	current := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "A", Message: "a", LastTransitionTime: then}}

	same := Condition(current, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "B", Message: "b"})
	if !same.LastTransitionTime.Equal(&then) || same.Reason != "B" || same.Message != "b" {
		t.Errorf("status unchanged: got %+v, want the old transition time with the new reason and message", same)
	}
	flipped := Condition(current, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "C"})
	if !flipped.LastTransitionTime.After(then.Time) {
		t.Errorf("status changed: transition time %v, want now", flipped.LastTransitionTime)
	}
	first := Condition(nil, metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "A"})
	if first.LastTransitionTime.IsZero() {
		t.Error("a first condition has no transition time")
	}
}

func TestChanged(t *testing.T) {
	current := []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "A", Message: "a", ObservedGeneration: 2,
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}
	base := metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: "A", Message: "a", ObservedGeneration: 2}
	for _, tt := range []struct {
		name string
		c    func(metav1.Condition) metav1.Condition
		want bool
	}{
		{"the same but for the transition time", func(c metav1.Condition) metav1.Condition { return c }, false},
		{"status", func(c metav1.Condition) metav1.Condition { c.Status = metav1.ConditionFalse; return c }, true},
		{"reason", func(c metav1.Condition) metav1.Condition { c.Reason = "B"; return c }, true},
		{"message", func(c metav1.Condition) metav1.Condition { c.Message = "b"; return c }, true},
		{"generation", func(c metav1.Condition) metav1.Condition { c.ObservedGeneration = 3; return c }, true},
		{"another type", func(c metav1.Condition) metav1.Condition { c.Type = "Other"; return c }, true},
	} {
		if got := Changed(current, tt.c(base)); got != tt.want {
			t.Errorf("%s: Changed = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// An all-zero struct in a status is left out of the apply, not sent as an empty object.
func TestWithoutEmptyObjects(t *testing.T) {
	in := map[string]any{
		"phase":   "Deleting",
		"reclaim": map[string]any{},
		"nested":  map[string]any{"empty": map[string]any{}, "kept": "x"},
		"gone":    map[string]any{"empty": map[string]any{}},
		"list":    []any{map[string]any{}},
	}
	want := map[string]any{
		"phase":  "Deleting",
		"nested": map[string]any{"kept": "x"},
		"list":   []any{map[string]any{}},
	}
	if got := withoutEmptyObjects(in); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
