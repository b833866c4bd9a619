package placement

import (
	"fmt"
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

// made sets the pair's creation time, in seconds.
func made(p schedulingv1alpha1.LocationPair, at int64) schedulingv1alpha1.LocationPair {
	p.CreationTimestamp = metav1.Unix(at, 0)
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
	namespaces := []namespaceLabels{{name: "a", labels: labels.Set{"app": "db"}}, {name: "b", labels: labels.Set{"app": "web"}},
		{name: "a-drill", labels: labels.Set{"app": "db", schedulingv1alpha1.DrillLabel: "d1"}}}
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
		drill        string // the Placement's DrillLabel
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
			// The pair made later, listed first, shares east with the one made first: it waits,
			// and the Placement follows the one acted on.
			name: "of two pairs sharing the Location, the one made first is followed", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs:        []schedulingv1alpha1.LocationPair{made(pair("east", "west", ""), 2), made(pair("east", "north", "north"), 1)},
			wantLocation: "north", wantNS: []string{"a", "b"},
			wantReasons: map[string]string{schedulingv1alpha1.ConditionReady: schedulingv1alpha1.ReasonLocationSelected},
		},
		{
			name: "a drill's Placement places its sandboxes in the paired Location it names, not the active one", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs: []schedulingv1alpha1.LocationPair{pair("east", "north", "north")}, drill: "d1", wantLocation: "east", wantNS: []string{"a-drill"},
		},
		{
			name: "another drill's Placement places none of them", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			drill: "d2", wantLocation: "east", wantNS: nil,
		},
		{
			name: "a pair of other Locations changes nothing", spec: schedulingv1alpha1.PlacementSpec{LocationName: "east"},
			pairs: []schedulingv1alpha1.LocationPair{pair("west", "north", "north")}, wantLocation: "east", wantNS: []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &schedulingv1alpha1.Placement{Spec: tt.spec}
			if tt.drill != "" {
				p.Labels = map[string]string{schedulingv1alpha1.DrillLabel: tt.drill}
			}
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

func TestSystemNamespace(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"kube-system", true},
		{"kube-public", true},
		{"kube-node-lease", true},
		{"kube-anything", true},
		{"custody-system", true},
		{"custody-heartbeats", true},
		{workloadv1alpha1.HeartbeatNamespace, true},
		{"default", false},
		{"demo", false},
		{"kube", false},
		{"kubeflow", false},
		{"custody", false},
		{"my-kube-system", false},
		{"app-custody-system", false},
	}
	for _, tt := range tests {
		if got := schedulingv1alpha1.SystemNamespace(tt.name); got != tt.want {
			t.Errorf("SystemNamespace(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDecideRefusesSystemNamespaces(t *testing.T) {
	locs := []schedulingv1alpha1.Location{location("east", 1, nil)}
	targets := []workloadv1alpha1.SyncTarget{target("e1", "east", false)}
	many := []namespaceLabels{{name: "demo"}}
	for i := range 12 {
		many = append(many, namespaceLabels{name: fmt.Sprintf("kube-x%02d", i)})
	}
	tests := []struct {
		name        string
		namespaces  []namespaceLabels
		selector    metav1.LabelSelector
		wantNS      []string
		wantStatus  metav1.ConditionStatus
		wantReason  string
		wantMessage string
	}{
		{
			name: "an empty selector places user namespaces only, and unbinds a system namespace bound before",
			namespaces: []namespaceLabels{
				{name: "demo"}, {name: "kube-system", placements: []string{"p"}}, {name: "kube-public"}, {name: "kube-node-lease"},
				{name: "custody-system"}, {name: "default"},
			},
			wantNS: []string{"default", "demo"}, wantStatus: metav1.ConditionFalse, wantReason: schedulingv1alpha1.ReasonSystemNamespacesRefused,
			wantMessage: "the namespace selector matches system namespaces, which are never placed: custody-system, kube-node-lease, kube-public, kube-system",
		},
		{
			name:       "a selector that matches no system namespace",
			namespaces: []namespaceLabels{{name: "demo", labels: labels.Set{"app": "db"}}, {name: "kube-system"}},
			selector:   metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			wantNS:     []string{"demo"}, wantStatus: metav1.ConditionTrue, wantReason: schedulingv1alpha1.ReasonNamespacesAllowed,
		},
		{
			name:       "a labelled system namespace is refused too",
			namespaces: []namespaceLabels{{name: "kube-system", labels: labels.Set{"app": "db"}}},
			selector:   metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			wantStatus: metav1.ConditionFalse, wantReason: schedulingv1alpha1.ReasonSystemNamespacesRefused,
			wantMessage: "the namespace selector matches system namespaces, which are never placed: kube-system",
		},
		{
			name: "the heartbeat Leases' namespace", namespaces: []namespaceLabels{{name: workloadv1alpha1.HeartbeatNamespace}},
			wantStatus: metav1.ConditionFalse, wantReason: schedulingv1alpha1.ReasonSystemNamespacesRefused,
			wantMessage: "the namespace selector matches system namespaces, which are never placed: " + workloadv1alpha1.HeartbeatNamespace,
		},
		{
			name: "the message names ten and counts the rest", namespaces: many, wantNS: []string{"demo"},
			wantStatus: metav1.ConditionFalse, wantReason: schedulingv1alpha1.ReasonSystemNamespacesRefused,
			wantMessage: "the namespace selector matches system namespaces, which are never placed: " +
				"kube-x00, kube-x01, kube-x02, kube-x03, kube-x04, kube-x05, kube-x06, kube-x07, kube-x08, kube-x09 and 2 more",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &schedulingv1alpha1.Placement{Spec: schedulingv1alpha1.PlacementSpec{LocationName: "east", NamespaceSelector: tt.selector}}
			p.Name = "p"
			out := decide(observed{placement: p, locations: locs, targets: targets, namespaces: tt.namespaces})
			if out.keepBindings || !slices.Equal(out.namespaces, tt.wantNS) {
				t.Fatalf("namespaces %v keep %v, want %v", out.namespaces, out.keepBindings, tt.wantNS)
			}
			c := meta.FindStatusCondition(out.conditions, schedulingv1alpha1.ConditionNamespacesAllowed)
			if c == nil || c.Status != tt.wantStatus || c.Reason != tt.wantReason {
				t.Fatalf("condition %+v, want %s %s", c, tt.wantStatus, tt.wantReason)
			}
			if tt.wantMessage != "" && c.Message != tt.wantMessage {
				t.Fatalf("message %q, want %q", c.Message, tt.wantMessage)
			}
		})
	}
}

func TestSelectionChangedOnlyByLabelsAndRestriction(t *testing.T) {
	base := func() *workloadv1alpha1.SyncTarget {
		return &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "t", Labels: map[string]string{"loc": "a"}}}
	}
	for _, tc := range []struct {
		name   string
		change func(*workloadv1alpha1.SyncTarget)
		want   bool
	}{
		{"a label", func(t *workloadv1alpha1.SyncTarget) { t.Labels["loc"] = "b" }, true},
		{"restricted", func(t *workloadv1alpha1.SyncTarget) { t.Spec.Restricted = true }, true},
		{"cordoned", func(t *workloadv1alpha1.SyncTarget) { t.Spec.Unschedulable = true }, false},
		{"its Ready condition", func(t *workloadv1alpha1.SyncTarget) {
			t.Status.Conditions = []metav1.Condition{{Type: workloadv1alpha1.ConditionReady, Status: metav1.ConditionFalse}}
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := base()
			tc.change(n)
			if got := selectionChanged(base(), n); got != tc.want {
				t.Errorf("selectionChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
