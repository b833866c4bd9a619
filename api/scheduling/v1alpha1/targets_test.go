package v1alpha1

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func target(name string, labels map[string]string, restricted bool) workloadv1alpha1.SyncTarget {
	return workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: workloadv1alpha1.SyncTargetSpec{Restricted: restricted}}
}

func names(ts []workloadv1alpha1.SyncTarget) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestLocationTargets(t *testing.T) {
	all := []workloadv1alpha1.SyncTarget{
		target("a", map[string]string{"loc": "1"}, false), target("b", map[string]string{"loc": "2"}, false), target("c", map[string]string{"loc": "1"}, true),
	}
	loc := func(name string, sel metav1.LabelSelector) Location {
		return Location{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: LocationSpec{InstanceSelector: sel}}
	}
	locations := []Location{
		loc("one", metav1.LabelSelector{MatchLabels: map[string]string{"loc": "1"}}),
		loc("every", metav1.LabelSelector{}),
		loc("bad", metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "loc", Operator: "Bad"}}}),
	}
	tests := []struct {
		location string
		want     []string
		ok       bool
	}{
		{"one", []string{"a", "c"}, true},
		{"every", []string{"a", "b", "c"}, true},
		{"bad", nil, false},
		{"missing", nil, false},
	}
	for _, tt := range tests {
		got, ok := LocationTargets(tt.location, locations, all)
		if ok != tt.ok || len(got) != len(tt.want) || (len(got) > 0 && !slices.Equal(names(got), tt.want)) {
			t.Errorf("LocationTargets(%s) = %v, %v; want %v, %v", tt.location, names(got), ok, tt.want, tt.ok)
		}
	}
	if _, err := locations[2].Targets(all); err == nil {
		t.Error("Targets of a selector that does not parse: no error")
	}
}

func TestMayUse(t *testing.T) {
	restricted, open := target("r", nil, true), target("o", nil, false)
	anyTarget := &Placement{}
	namesR := &Placement{Spec: PlacementSpec{TargetNames: []string{"r"}}}
	for _, tt := range []struct {
		p    *Placement
		t    *workloadv1alpha1.SyncTarget
		want bool
	}{
		{anyTarget, &open, true}, {anyTarget, &restricted, false}, {namesR, &restricted, true}, {namesR, &open, false},
	} {
		if got := tt.p.MayUse(tt.t); got != tt.want {
			t.Errorf("MayUse(names %v, %s) = %v, want %v", tt.p.Spec.TargetNames, tt.t.Name, got, tt.want)
		}
	}
}

func TestInEffect(t *testing.T) {
	now := metav1.Now()
	ready := []metav1.Condition{{Type: ConditionReady, Status: metav1.ConditionTrue}}
	for _, tt := range []struct {
		name string
		p    Placement
		want bool
	}{
		{name: "a Location and Ready", p: Placement{Status: PlacementStatus{SelectedLocation: "l", Conditions: ready}}, want: true},
		{name: "no Location", p: Placement{Status: PlacementStatus{Conditions: ready}}},
		{name: "not Ready", p: Placement{Status: PlacementStatus{SelectedLocation: "l"}}},
		{name: "being deleted", p: Placement{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}, Status: PlacementStatus{SelectedLocation: "l", Conditions: ready}}},
	} {
		if got := tt.p.InEffect(); got != tt.want {
			t.Errorf("%s: InEffect = %v, want %v", tt.name, got, tt.want)
		}
	}
}
