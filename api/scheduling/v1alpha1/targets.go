package v1alpha1

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Targets returns the SyncTargets among all that the Location's instance selector selects,
// or the error that the selector does not parse.
func (l *Location) Targets(all []workloadv1alpha1.SyncTarget) ([]workloadv1alpha1.SyncTarget, error) {
	sel, err := metav1.LabelSelectorAsSelector(&l.Spec.InstanceSelector)
	if err != nil {
		return nil, err
	}
	var out []workloadv1alpha1.SyncTarget
	for _, t := range all {
		if sel.Matches(labels.Set(t.Labels)) {
			out = append(out, t)
		}
	}
	return out, nil
}

// LocationTargets returns the SyncTargets of the Location named location. ok is false when
// no such Location is among locations or its selector does not parse.
func LocationTargets(location string, locations []Location, all []workloadv1alpha1.SyncTarget) (_ []workloadv1alpha1.SyncTarget, ok bool) {
	i := slices.IndexFunc(locations, func(l Location) bool { return l.Name == location })
	if i < 0 {
		return nil, false
	}
	targets, err := locations[i].Targets(all)
	return targets, err == nil
}

// MayUse tells whether the Placement may use the target at all: only the targets it names
// when it names any, else every target that is not restricted.
func (p *Placement) MayUse(t *workloadv1alpha1.SyncTarget) bool {
	if len(p.Spec.TargetNames) > 0 {
		return slices.Contains(p.Spec.TargetNames, t.Name)
	}
	return !t.Spec.Restricted
}

// InEffect tells whether the Placement moves namespaces: it is not being deleted, has a
// Location, and is Ready.
func (p *Placement) InEffect() bool {
	return p.DeletionTimestamp.IsZero() && p.Status.SelectedLocation != "" &&
		meta.IsStatusConditionTrue(p.Status.Conditions, ConditionReady)
}

// SystemNamespace tells whether a namespace is Kubernetes' own (kube-system, kube-public,
// kube-node-lease, any kube-*) or Custody's (any custody-*: custody-system, the heartbeat
// Leases' namespace). Placing one would copy the hub's own objects, Custody's identities among
// them, into a member, and hand a member's syncer the namespace of every target's heartbeat:
// no Placement ever selects one, however wide its selector.
func SystemNamespace(name string) bool {
	return strings.HasPrefix(name, "kube-") || strings.HasPrefix(name, "custody-")
}
