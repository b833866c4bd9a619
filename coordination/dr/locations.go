package dr

import (
	"slices"

	"github.com/custody-dev/custody/fencing"
)

// peer is the Location of the pair that is not loc.
func (o Observation) peer(loc string) string {
	if loc == o.Pair.Primary {
		return o.Pair.Secondary
	}
	return o.Pair.Primary
}

// overlap is a target in both Locations of the pair, "" when there is none.
func (o Observation) overlap() string {
	for _, t := range o.Locations[o.Pair.Primary].Targets {
		if o.Locations[o.Pair.Secondary].has(t.Key) {
			return t.Key
		}
	}
	return ""
}

// together tells whether two targets are in one Location of the pair.
func (o Observation) together(a, b string) bool {
	for _, name := range []string{o.Pair.Primary, o.Pair.Secondary} {
		if l := o.Locations[name]; l.has(a) && l.has(b) {
			return true
		}
	}
	return false
}

func (l Location) has(key string) bool {
	return key != "" && slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Key == key })
}

func (l Location) anyReady() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Ready })
}

// fenced: a target still has a Fence, in any state.
func (l Location) fenced() bool {
	return slices.ContainsFunc(l.Targets, func(t Target) bool { return t.Fence != fencing.Unfenced })
}
