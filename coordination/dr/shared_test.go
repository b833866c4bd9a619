package dr

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

func TestSharedLocations(t *testing.T) {
	p := PairLocations{Name: "p", Created: now, Primary: "east", Secondary: "west"}
	made := func(name string, at time.Duration, primary, secondary string) PairLocations {
		return PairLocations{Name: name, Created: now.Add(at), Primary: primary, Secondary: secondary}
	}
	for _, tt := range []struct {
		name   string
		others []PairLocations
		want   []Sharing
		yields bool
		status metav1.ConditionStatus
	}{
		{name: "alone", status: metav1.ConditionTrue},
		{name: "other pairs of other Locations", others: []PairLocations{made("q", -time.Hour, "north", "south")}, status: metav1.ConditionTrue},
		{name: "made later, shares the primary", others: []PairLocations{made("q", time.Hour, "east", "north")},
			want: []Sharing{{Pair: "q", Location: "east"}}, status: metav1.ConditionFalse},
		{name: "made earlier, has the secondary as its primary", others: []PairLocations{made("q", -time.Hour, "west", "north")},
			want: []Sharing{{Pair: "q", Location: "west", Earlier: true}}, yields: true, status: metav1.ConditionFalse},
		{name: "the same two Locations, swapped", others: []PairLocations{made("q", -time.Hour, "west", "east")},
			want: []Sharing{{Pair: "q", Location: "east", Earlier: true}}, yields: true, status: metav1.ConditionFalse},
		{name: "made in the same second: the name decides", others: []PairLocations{made("a", 0, "east", "north"), made("z", 0, "west", "north")},
			want: []Sharing{{Pair: "a", Location: "east", Earlier: true}, {Pair: "z", Location: "west"}}, yields: true, status: metav1.ConditionFalse},
		{name: "in the order made", others: []PairLocations{made("late", time.Hour, "east", "a"), made("early", -time.Hour, "east", "b"), made("between", -time.Minute, "west", "c")},
			want:   []Sharing{{Pair: "early", Location: "east", Earlier: true}, {Pair: "between", Location: "west", Earlier: true}, {Pair: "late", Location: "east"}},
			yields: true, status: metav1.ConditionFalse},
		{name: "the pair itself in the list", others: []PairLocations{p}, status: metav1.ConditionTrue},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := SharedLocations(p, append([]PairLocations{p}, tt.others...))
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SharedLocations = %+v, want %+v", got, tt.want)
			}
			if y := Yields(got); y != tt.yields {
				t.Errorf("Yields = %v, want %v", y, tt.yields)
			}
			if c := ExclusiveCondition(got); c.Status != tt.status {
				t.Errorf("condition %s, want %s: %s", c.Status, tt.status, c.Message)
			}
		})
	}
}

func TestExclusiveConditionNamesTheOtherPairs(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shares []Sharing
		want   metav1.Condition
	}{
		{name: "none", want: metav1.Condition{Type: schedulingv1alpha1.ConditionLocationsExclusive, Status: metav1.ConditionTrue,
			Reason: schedulingv1alpha1.ReasonLocationsExclusive, Message: "no other LocationPair has either Location of the pair"}},
		{name: "an earlier pair", shares: []Sharing{{Pair: "first", Location: "east", Earlier: true}},
			want: metav1.Condition{Type: schedulingv1alpha1.ConditionLocationsExclusive, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonLocationShared,
				Message: "made before this pair and sharing a Location with it: LocationPair first (Location east); this pair is not acted on (no replication, failover or relocate) while any of them exists"}},
		{name: "later pairs", shares: []Sharing{{Pair: "b", Location: "east"}, {Pair: "c", Location: "west"}},
			want: metav1.Condition{Type: schedulingv1alpha1.ConditionLocationsExclusive, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonLocationShared,
				Message: "made after this pair and sharing a Location with it: LocationPair b (Location east), LocationPair c (Location west); not acted on while this pair exists"}},
		{name: "both", shares: []Sharing{{Pair: "a", Location: "east", Earlier: true}, {Pair: "c", Location: "west"}},
			want: metav1.Condition{Type: schedulingv1alpha1.ConditionLocationsExclusive, Status: metav1.ConditionFalse, Reason: schedulingv1alpha1.ReasonLocationShared,
				Message: "made before this pair and sharing a Location with it: LocationPair a (Location east); this pair is not acted on (no replication, failover or relocate) while any of them exists; " +
					"made after this pair and sharing a Location with it: LocationPair c (Location west); not acted on while this pair exists"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExclusiveCondition(tt.shares); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ExclusiveCondition =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestActingOn(t *testing.T) {
	first := PairLocations{Name: "first", Created: now, Primary: "east", Secondary: "west"}
	second := PairLocations{Name: "second", Created: now.Add(time.Minute), Primary: "west", Secondary: "north"}
	third := PairLocations{Name: "third", Created: now.Add(time.Hour), Primary: "north", Secondary: "south"}
	apart := PairLocations{Name: "apart", Created: now.Add(time.Hour), Primary: "up", Secondary: "down"}
	all := []PairLocations{third, apart, second, first}
	for location, want := range map[string]string{
		"east": "first", "west": "first", "up": "apart", "down": "apart",
		// second waits for first, and third for second, though second is not acted on.
		"north": "", "south": "",
		"nowhere": "",
	} {
		if got := ActingOn(location, all); got != want {
			t.Errorf("ActingOn(%s) = %q, want %q", location, got, want)
		}
	}
}
