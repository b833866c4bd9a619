package dr

import (
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// PairLocations is one LocationPair as the check of shared Locations reads it.
type PairLocations struct {
	Name               string
	Created            time.Time
	Primary, Secondary string
}

// LocationsOf reads a LocationPair for the check of shared Locations.
func LocationsOf(p *schedulingv1alpha1.LocationPair) PairLocations {
	return PairLocations{Name: p.Name, Created: p.CreationTimestamp.Time, Primary: p.Spec.Primary, Secondary: p.Spec.Secondary}
}

// LiveLocations reads the pairs that are not being deleted.
func LiveLocations(pairs []schedulingv1alpha1.LocationPair) []PairLocations {
	out := make([]PairLocations, 0, len(pairs))
	for i := range pairs {
		if pairs[i].DeletionTimestamp.IsZero() {
			out = append(out, LocationsOf(&pairs[i]))
		}
	}
	return out
}

// Sharing is another pair that has a Location of the pair.
type Sharing struct {
	Pair, Location string
	// Earlier: the other pair was made first. The pair made first of two that share a
	// Location is the one acted on: it may have protected the Location for long, and a pair
	// made since must not take that over, or stop it.
	Earlier bool
}

// SharedLocations lists the pairs of all, p aside, that have a Location of p, in the order
// they were made: by creation time, and by name within the second the API keeps.
func SharedLocations(p PairLocations, all []PairLocations) []Sharing {
	var others []PairLocations
	for _, o := range all {
		if o.Name != p.Name && sharedLocation(p, o) != "" {
			others = append(others, o)
		}
	}
	slices.SortFunc(others, compareMade)
	out := make([]Sharing, 0, len(others))
	for _, o := range others {
		out = append(out, Sharing{Pair: o.Name, Location: sharedLocation(p, o), Earlier: compareMade(o, p) < 0})
	}
	return out
}

// compareMade orders pairs by when they were made, then by name.
func compareMade(a, b PairLocations) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// sharedLocation is a Location of a that b has too, the primary's first; "" when none.
func sharedLocation(a, b PairLocations) string {
	for _, l := range []string{a.Primary, a.Secondary} {
		if l == b.Primary || l == b.Secondary {
			return l
		}
	}
	return ""
}

// Yields tells whether a pair made earlier shares a Location of the pair: it is then not
// acted on.
func Yields(shares []Sharing) bool {
	return slices.ContainsFunc(shares, func(s Sharing) bool { return s.Earlier })
}

// ExclusiveCondition is the pair's LocationsExclusive condition: False, naming each other
// pair and the Location it shares, while there is one.
func ExclusiveCondition(shares []Sharing) metav1.Condition {
	c := metav1.Condition{Type: schedulingv1alpha1.ConditionLocationsExclusive, Status: metav1.ConditionTrue,
		Reason: schedulingv1alpha1.ReasonLocationsExclusive, Message: "no other LocationPair has either Location of the pair"}
	var earlier, later []string
	for _, s := range shares {
		named := fmt.Sprintf("LocationPair %s (Location %s)", s.Pair, s.Location)
		if s.Earlier {
			earlier = append(earlier, named)
		} else {
			later = append(later, named)
		}
	}
	var msgs []string
	if len(earlier) > 0 {
		msgs = append(msgs, "made before this pair and sharing a Location with it: "+strings.Join(earlier, ", ")+
			"; this pair is not acted on (no replication, failover or relocate) while any of them exists")
	}
	if len(later) > 0 {
		msgs = append(msgs, "made after this pair and sharing a Location with it: "+strings.Join(later, ", ")+
			"; not acted on while this pair exists")
	}
	if len(msgs) > 0 {
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, schedulingv1alpha1.ReasonLocationShared, strings.Join(msgs, "; ")
	}
	return c
}

// ActingOn is the pair of all acted on that has the Location, "" when none is: of two pairs
// that share a Location, the one made later is not. Whoever follows a pair's active Location
// (the Placements of its Locations) follows that one, never a pair that waits.
func ActingOn(location string, all []PairLocations) string {
	for _, p := range all {
		if (p.Primary == location || p.Secondary == location) && !Yields(SharedLocations(p, all)) {
			return p.Name
		}
	}
	return ""
}
