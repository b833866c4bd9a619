package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
)

// observed is what the controller read for one Placement.
type observed struct {
	placement  *schedulingv1alpha1.Placement
	locations  []schedulingv1alpha1.Location
	targets    []workloadv1alpha1.SyncTarget
	namespaces []namespaceLabels
	pairs      []schedulingv1alpha1.LocationPair
}

type namespaceLabels struct {
	name       string
	labels     labels.Set
	placements []string // the Placements bound to it now
}

// outcome is the controller's decision for one Placement.
type outcome struct {
	location string
	// namespaces are the namespaces to bind; nil with keepBindings means "leave them".
	namespaces   []string
	keepBindings bool
	conditions   []metav1.Condition
}

// decide selects the Location and namespaces of a Placement from what was observed.
func decide(o observed) outcome {
	p := o.placement
	out := outcome{location: p.Status.SelectedLocation}

	locSelectors, err := parseSelectors(p.Spec.LocationSelectors)
	if err == nil {
		var nsSelector labels.Selector
		if nsSelector, err = metav1.LabelSelectorAsSelector(&p.Spec.NamespaceSelector); err == nil {
			out.conditions = append(out.conditions, condition(schedulingv1alpha1.ConditionSpecValid, true,
				schedulingv1alpha1.ReasonSelectorValid, "every selector parses"))
			out.location, out.conditions = selectLocation(p, locSelectors, o.locations, out.conditions)
			drill := p.Labels[schedulingv1alpha1.DrillLabel]
			if drill == "" {
				out.location, out.conditions = followPair(out.location, o.pairs, out.conditions)
			}
			var refused []string
			out.namespaces, refused = matchingNamespaces(nsSelector, drill, o.namespaces)
			out.conditions = append(out.conditions, namespacesCondition(refused))
		}
	}
	if err != nil {
		// Keep the Location, Ready and bindings as they were: only the spec is wrong.
		out.keepBindings = true
		out.conditions = append(out.conditions, condition(schedulingv1alpha1.ConditionSpecValid, false,
			schedulingv1alpha1.ReasonInvalidSelector, err.Error()))
		return out
	}
	if out.location == "" {
		out.namespaces = nil
	}
	out.conditions = append(out.conditions, targetsCondition(p, out.location, o))
	return out
}

func parseSelectors(in []metav1.LabelSelector) ([]labels.Selector, error) {
	out := make([]labels.Selector, 0, len(in))
	for i := range in {
		s, err := metav1.LabelSelectorAsSelector(&in[i])
		if err != nil {
			return nil, fmt.Errorf("locationSelectors[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// selectLocation keeps the selected Location while it exists and matches, else picks the
// matching Location with the most targets, ties broken by name.
func selectLocation(p *schedulingv1alpha1.Placement, selectors []labels.Selector, locations []schedulingv1alpha1.Location, conds []metav1.Condition) (string, []metav1.Condition) {
	var candidates []schedulingv1alpha1.Location
	for _, l := range locations {
		if l.DeletionTimestamp == nil && matchesLocation(p, selectors, l) {
			candidates = append(candidates, l)
		}
	}
	if len(candidates) == 0 {
		reason, msg := schedulingv1alpha1.ReasonNoMatchingLocation, "no Location matches the location selectors"
		if p.Spec.LocationName != "" && !slices.ContainsFunc(locations, func(l schedulingv1alpha1.Location) bool { return l.Name == p.Spec.LocationName }) {
			reason, msg = schedulingv1alpha1.ReasonLocationNotFound, fmt.Sprintf("Location %q does not exist", p.Spec.LocationName)
		}
		return "", append(conds, condition(schedulingv1alpha1.ConditionReady, false, reason, msg))
	}
	chosen := slices.IndexFunc(candidates, func(l schedulingv1alpha1.Location) bool { return l.Name == p.Status.SelectedLocation })
	if chosen < 0 {
		sort.SliceStable(candidates, func(i, j int) bool {
			if a, b := candidates[i].Status.AvailableInstances, candidates[j].Status.AvailableInstances; a != b {
				return a > b
			}
			return candidates[i].Name < candidates[j].Name
		})
		chosen = 0
	}
	name := candidates[chosen].Name
	return name, append(conds, condition(schedulingv1alpha1.ConditionReady, true,
		schedulingv1alpha1.ReasonLocationSelected, fmt.Sprintf("Location %q matches", name)))
}

// followPair puts the namespaces of a Placement whose Location is one of a LocationPair's in
// the pair's active Location, which a failover or a relocate switches. Of two pairs that
// share the Location, it follows the one acted on (dr.ActingOn): the other waits, its
// active Location unset.
func followPair(location string, pairs []schedulingv1alpha1.LocationPair, conds []metav1.Condition) (string, []metav1.Condition) {
	acting := dr.ActingOn(location, dr.LiveLocations(pairs))
	i := slices.IndexFunc(pairs, func(p schedulingv1alpha1.LocationPair) bool { return p.Name == acting })
	if location == "" || i < 0 || pairs[i].Active() == location {
		return location, conds
	}
	active := pairs[i].Active()
	return active, append(slices.DeleteFunc(conds, func(c metav1.Condition) bool { return c.Type == schedulingv1alpha1.ConditionReady }),
		condition(schedulingv1alpha1.ConditionReady, true, schedulingv1alpha1.ReasonLocationSelected,
			fmt.Sprintf("Location %q matches; its LocationPair %q runs it in %q", location, pairs[i].Name, active)))
}

func matchesLocation(p *schedulingv1alpha1.Placement, selectors []labels.Selector, l schedulingv1alpha1.Location) bool {
	if p.Spec.LocationName != "" && l.Name != p.Spec.LocationName {
		return false
	}
	if len(selectors) == 0 {
		return true
	}
	return slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(labels.Set(l.Labels)) })
}

// matchingNamespaces returns, sorted, the namespaces the selector matches that may be placed,
// and those it matches that are refused as system namespaces. A refused namespace is left out
// of the bindings, so that one bound before is unbound. The sandboxes of a Drill are placed
// only by the Placement of that drill (drill), which places nothing else.
func matchingNamespaces(s labels.Selector, drill string, namespaces []namespaceLabels) (placed, refused []string) {
	for _, ns := range namespaces {
		switch {
		case !s.Matches(ns.labels) || ns.labels[schedulingv1alpha1.DrillLabel] != drill:
		case schedulingv1alpha1.SystemNamespace(ns.name):
			refused = append(refused, ns.name)
		default:
			placed = append(placed, ns.name)
		}
	}
	sort.Strings(placed)
	sort.Strings(refused)
	return placed, refused
}

// namespacesCondition reports the system namespaces the selector matched and that were
// refused, naming at most maxNamed of them so that the message stays short.
func namespacesCondition(refused []string) metav1.Condition {
	if len(refused) == 0 {
		return condition(schedulingv1alpha1.ConditionNamespacesAllowed, true, schedulingv1alpha1.ReasonNamespacesAllowed,
			"the namespace selector matches no system namespace")
	}
	named := strings.Join(refused[:min(len(refused), maxNamed)], ", ")
	if more := len(refused) - maxNamed; more > 0 {
		named += fmt.Sprintf(" and %d more", more)
	}
	return condition(schedulingv1alpha1.ConditionNamespacesAllowed, false, schedulingv1alpha1.ReasonSystemNamespacesRefused,
		fmt.Sprintf("the namespace selector matches system namespaces, which are never placed: %s", named))
}

// maxNamed bounds the namespaces a condition's message names.
const maxNamed = 10

// targetsCondition tells whether the Placement may use a target of its Location: every
// target it names must exist, and a Location whose usable targets are all restricted is
// usable only by Placements that name them.
func targetsCondition(p *schedulingv1alpha1.Placement, location string, o observed) metav1.Condition {
	byName := map[string]workloadv1alpha1.SyncTarget{}
	for _, t := range o.targets {
		byName[t.Name] = t
	}
	var missing []string
	for _, n := range p.Spec.TargetNames {
		if _, ok := byName[n]; !ok {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return condition(schedulingv1alpha1.ConditionTargetsAvailable, false, schedulingv1alpha1.ReasonTargetNotFound,
			fmt.Sprintf("SyncTargets %s do not exist", strings.Join(missing, ", ")))
	}
	if location == "" {
		return condition(schedulingv1alpha1.ConditionTargetsAvailable, false, schedulingv1alpha1.ReasonNoMatchingLocation, "no Location is selected")
	}
	members, restricted := 0, []string{}
	targets, _ := schedulingv1alpha1.LocationTargets(location, o.locations, o.targets)
	for _, t := range targets {
		members++
		if p.MayUse(&t) {
			return condition(schedulingv1alpha1.ConditionTargetsAvailable, true, schedulingv1alpha1.ReasonTargetsAvailable,
				fmt.Sprintf("Location %q has targets this Placement may use", location))
		}
		if t.Spec.Restricted {
			restricted = append(restricted, t.Name)
		}
	}
	if len(restricted) > 0 {
		return condition(schedulingv1alpha1.ConditionTargetsAvailable, false, schedulingv1alpha1.ReasonTargetRestricted,
			fmt.Sprintf("SyncTargets %s of Location %q are restricted; name them in spec.targetNames to use them", strings.Join(restricted, ", "), location))
	}
	return condition(schedulingv1alpha1.ConditionTargetsAvailable, false, schedulingv1alpha1.ReasonNoEligibleTarget,
		fmt.Sprintf("Location %q has %d targets, none of them usable by this Placement", location, members))
}

func condition(t string, ok bool, reason, msg string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return metav1.Condition{Type: t, Status: status, Reason: reason, Message: msg}
}
