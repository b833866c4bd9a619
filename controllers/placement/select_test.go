package placement

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func location(name string, available int32, lbls map[string]string) schedulingv1alpha1.Location {
	l := schedulingv1alpha1.Location{Spec: schedulingv1alpha1.LocationSpec{
		InstanceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"loc": name}},
	}}
	l.Name, l.Labels, l.Status.AvailableInstances = name, lbls, available
	return l
}

func target(name, loc string, restricted bool) workloadv1alpha1.SyncTarget {
	t := workloadv1alpha1.SyncTarget{Spec: workloadv1alpha1.SyncTargetSpec{Restricted: restricted}}
	t.Name, t.Labels = name, map[string]string{"loc": loc}
	return t
}

func pair(primary, secondary, active string) schedulingv1alpha1.LocationPair {
	p := schedulingv1alpha1.LocationPair{Spec: schedulingv1alpha1.LocationPairSpec{Primary: primary, Secondary: secondary}}
	p.Name, p.Status.ActiveLocation = primary+"-"+secondary, active
	return p
}

func TestDecide(t *testing.T) {
	cloud := func(v string) metav1.LabelSelector {
		return metav1.LabelSelector{MatchLabels: map[string]string{"cloud": v}}
	}
	locs := []schedulingv1alpha1.Location{
		location("east", 1, map[string]string{"cloud": "x"}),
		location("west", 2, map[string]string{"cloud": "x"}),
		location("north", 1, map[string]string{"cloud": "y"}),
	}
	targets := []workloadv1alpha1.SyncTarget{target("e1", "east", false), target("w1", "west", false), target("n1", "north", true)}
	namespaces := []namespaceLabels{{name: "a", labels: labels.Set{"app": "db"}}, {name: "b", labels: labels.Set{"app": "web"}}}
	bad := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "cloud", Operator: "Sometimes"}}}

	tests := []struct {
		name         string
		spec         schedulingv1alpha1.PlacementSpec
		selected     string
		wantLocation string
		wantNS       []string
		wantKeep     bool
		wantReasons  map[string]string // condition type → reason
		pairs        []schedulingv1alpha1.LocationPair
	}{
		{
			name: "most available Location wins", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{cloud("x")}, NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
			wantLocation: "west", wantNS: []string{"a"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionReady: schedulingv1alpha1.ReasonLocationSelected, schedulingv1alpha1.ConditionTargetsAvailable: schedulingv1alpha1.ReasonTargetsAvailable},
		},
		{
			name: "selected Location kept while it matches", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{cloud("x")}},
			selected: "east", wantLocation: "east", wantNS: []string{"a", "b"},
		},
		{
			name: "reselects when the spec no longer matches", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{cloud("x")}, LocationName: "west"},
			selected: "east", wantLocation: "west", wantNS: []string{"a", "b"},
		},
		{
			name: "no Location matches: Pending, nothing bound", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{cloud("z")}},
			selected: "east", wantLocation: "",
			wantReasons: map[string]string{schedulingv1alpha1.ConditionReady: schedulingv1alpha1.ReasonNoMatchingLocation},
		},
		{
			name: "named Location missing", spec: schedulingv1alpha1.PlacementSpec{LocationName: "south"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionReady: schedulingv1alpha1.ReasonLocationNotFound},
		},
		{
			name: "invalid selector keeps everything", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{bad}},
			selected: "east", wantLocation: "east", wantKeep: true,
			wantReasons: map[string]string{schedulingv1alpha1.ConditionSpecValid: schedulingv1alpha1.ReasonInvalidSelector},
		},
		{
			name: "invalid namespace selector keeps everything", spec: schedulingv1alpha1.PlacementSpec{LocationSelectors: []metav1.LabelSelector{cloud("x")}, NamespaceSelector: bad},
			selected: "west", wantLocation: "west", wantKeep: true,
			wantReasons: map[string]string{schedulingv1alpha1.ConditionSpecValid: schedulingv1alpha1.ReasonInvalidSelector},
		},
		{
			name: "restricted targets not named", spec: schedulingv1alpha1.PlacementSpec{LocationName: "north"},
			wantLocation: "north", wantNS: []string{"a", "b"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionTargetsAvailable: schedulingv1alpha1.ReasonTargetRestricted},
		},
		{
			name: "restricted targets named", spec: schedulingv1alpha1.PlacementSpec{LocationName: "north", TargetNames: []string{"n1"}},
			wantLocation: "north", wantNS: []string{"a", "b"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionTargetsAvailable: schedulingv1alpha1.ReasonTargetsAvailable},
		},
		{
			name: "named target missing", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east", TargetNames: []string{"e1", "ghost"}},
			wantLocation: "east", wantNS: []string{"a", "b"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionTargetsAvailable: schedulingv1alpha1.ReasonTargetNotFound},
		},
		{
			name: "a paired Location's namespaces run in the pair's active Location", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs: []schedulingv1alpha1.LocationPair{pair("east", "north", "north")}, wantLocation: "north", wantNS: []string{"a", "b"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionReady: schedulingv1alpha1.ReasonLocationSelected},
		},
		{
			name: "and stay where they are while the selected Location is active", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs: []schedulingv1alpha1.LocationPair{pair("north", "east", "east")}, wantLocation: "east", wantNS: []string{"a", "b"},
		},
		{
			name: "a pair of other Locations changes nothing", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs: []schedulingv1alpha1.LocationPair{pair("west", "north", "north")}, wantLocation: "east", wantNS: []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &schedulingv1alpha1.Placement{Spec: tt.spec}
			p.Status.SelectedLocation = tt.selected
			out := decide(observed{placement: p, locations: locs, targets: targets, namespaces: namespaces, pairs: tt.pairs})
			if out.location != tt.wantLocation || out.keepBindings != tt.wantKeep {
				t.Fatalf("location %q keep %v, want %q keep %v", out.location, out.keepBindings, tt.wantLocation, tt.wantKeep)
			}
			if !tt.wantKeep && !slices.Equal(out.namespaces, tt.wantNS) {
				t.Fatalf("namespaces %v, want %v", out.namespaces, tt.wantNS)
			}
			for typ, reason := range tt.wantReasons {
				c := meta.FindStatusCondition(out.conditions, typ)
				if c == nil || c.Reason != reason {
					t.Fatalf("condition %s = %+v, want reason %s", typ, c, reason)
				}
			}
		})
	}
}
