package v1alpha1

// The namespace annotation the placement controller sets: the names of the Placements bound
// to the namespace, comma-separated and sorted.
const PlacementAnnotation = "scheduling.custody.dev/placement"

// Condition types.
const (
	// ConditionReady (Placement): the selected Location exists and still matches the spec.
	ConditionReady = "Ready"
	// ConditionSelectorValid (Location): the instance selector parses.
	ConditionSelectorValid = "SelectorValid"
)

// Reasons of conditions and events.
const (
	// ReasonLocationSelected: a Location matching the spec is selected.
	ReasonLocationSelected = "LocationSelected"
	// ReasonNoMatchingLocation: no Location matches the spec.
	ReasonNoMatchingLocation = "NoMatchingLocation"
	// ReasonLocationNotFound: the Location the spec names does not exist.
	ReasonLocationNotFound = "LocationNotFound"
	// ReasonInvalidSelector: a selector of the spec does not parse.
	ReasonInvalidSelector = "InvalidSelector"
	// ReasonTargetNotFound: a target the spec names does not exist.
	ReasonTargetNotFound = "TargetNotFound"
	// ReasonTargetRestricted: a restricted target is used only by Placements that name it.
	ReasonTargetRestricted = "TargetRestricted"
	// ReasonNoEligibleTarget: no target of the Location passes the scheduler's filter.
	ReasonNoEligibleTarget = "NoEligibleTarget"
	// ReasonScheduled: a namespace was placed on a target.
	ReasonScheduled = "Scheduled"
	// ReasonRescheduled: a namespace left a target that became ineligible.
	ReasonRescheduled = "Rescheduled"
)
