package statefulset

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// setKind is the kind the claims' owner references name.
var setKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

// claimName is the name Kubernetes' StatefulSet controller gives the claim of a template for
// the pod with the ordinal, and by which a member's StatefulSet controller finds it.
func claimName(template, set string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", template, set, ordinal)
}

// ordinalRange is the set's ordinals: start (spec.ordinals.start) up to, not including,
// start + replicas. A set without replicas has one, as the API server defaults it.
func ordinalRange(set *appsv1.StatefulSet) (start, end int) {
	if set.Spec.Ordinals != nil {
		start = int(set.Spec.Ordinals.Start)
	}
	return start, start + int(ptr.Deref(set.Spec.Replicas, 1))
}

// ordinalOf is the ordinal of a claim that one of the set's templates names; ok is false for
// any other name.
func ordinalOf(set *appsv1.StatefulSet, name string) (int, bool) {
	for _, t := range set.Spec.VolumeClaimTemplates {
		rest, ok := strings.CutPrefix(name, t.Name+"-"+set.Name+"-")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
			return n, true
		}
	}
	return 0, false
}

// retention is the set's persistentVolumeClaimRetentionPolicy; unset means Retain for both.
func retention(set *appsv1.StatefulSet) appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy {
	p := appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
		WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
	}
	if rp := set.Spec.PersistentVolumeClaimRetentionPolicy; rp != nil {
		p.WhenDeleted = cmp.Or(rp.WhenDeleted, p.WhenDeleted)
		p.WhenScaled = cmp.Or(rp.WhenScaled, p.WhenScaled)
	}
	return p
}

// newClaim is the claim of a template for an ordinal, as Kubernetes' StatefulSet controller
// makes it: the template's metadata and spec under the claim's name, in the set's namespace,
// with the set's selector labels added, and owned by the set when the set's claims go with
// it (whenDeleted Delete). It is marked as the set's.
func newClaim(set *appsv1.StatefulSet, template *corev1.PersistentVolumeClaim, ordinal int) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   set.Namespace,
			Name:        claimName(template.Name, set.Name, ordinal),
			Labels:      maps.Clone(template.Labels),
			Annotations: maps.Clone(template.Annotations),
		},
		Spec: *template.Spec.DeepCopy(),
	}
	if set.Spec.Selector != nil && len(set.Spec.Selector.MatchLabels) > 0 {
		if c.Labels == nil {
			c.Labels = map[string]string{}
		}
		maps.Copy(c.Labels, set.Spec.Selector.MatchLabels)
	}
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.StatefulSetAnnotation, set.Name)
	c.OwnerReferences = ownerRefs(set, nil)
	return c
}

// ownerRefs are the owner references a claim of the set in its ordinal range should carry,
// given the ones it carries, as Kubernetes' StatefulSet controller keeps them: the set's
// controller reference when whenDeleted is Delete, none to the set otherwise; references to
// anything else stay.
func ownerRefs(set *appsv1.StatefulSet, refs []metav1.OwnerReference) []metav1.OwnerReference {
	out := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return refersTo(r, set) })
	if retention(set).WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		out = append(out, *metav1.NewControllerRef(set, setKind))
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// refersTo tells whether the reference names the set, by kind and name.
func refersTo(r metav1.OwnerReference, set *appsv1.StatefulSet) bool {
	return r.APIVersion == setKind.GroupVersion().String() && r.Kind == setKind.Kind && r.Name == set.Name
}

// foreign tells whether the set must leave the claim's ownership alone, as Kubernetes'
// StatefulSet controller does: another controller owns it, or it names an earlier set of the
// same name (its UID differs), whose garbage collection decides.
func foreign(set *appsv1.StatefulSet, claim *corev1.PersistentVolumeClaim) bool {
	for _, r := range claim.OwnerReferences {
		if refersTo(r, set) {
			if r.UID != set.UID {
				return true
			}
			continue
		}
		if ptr.Deref(r.Controller, false) {
			return true
		}
	}
	return false
}

// plan is what the set's claims need on the hub.
type plan struct {
	// create are the claims of ordinals in range that do not exist.
	create []*corev1.PersistentVolumeClaim
	// update are claims of ordinals in range whose owner references or mark must change;
	// they are the claims as they should be.
	update []*corev1.PersistentVolumeClaim
	// remove are the set's claims of ordinals out of range, which whenScaled Delete deletes.
	remove []*corev1.PersistentVolumeClaim
	// inRange are the existing claims of ordinals in range, by name; a claim being deleted
	// is not among them, and is made again once it is gone.
	inRange map[string]*corev1.PersistentVolumeClaim
	// want are the names of every claim of an ordinal in range.
	want []string
}

// planClaims compares the set's claims with the claims of its namespace.
func planClaims(set *appsv1.StatefulSet, claims []corev1.PersistentVolumeClaim) plan {
	p := plan{inRange: map[string]*corev1.PersistentVolumeClaim{}}
	byName := map[string]*corev1.PersistentVolumeClaim{}
	for i := range claims {
		byName[claims[i].Name] = &claims[i]
	}
	start, end := ordinalRange(set)
	for ordinal := start; ordinal < end; ordinal++ {
		for i := range set.Spec.VolumeClaimTemplates {
			t := &set.Spec.VolumeClaimTemplates[i]
			name := claimName(t.Name, set.Name, ordinal)
			p.want = append(p.want, name)
			c, ok := byName[name]
			switch {
			case !ok:
				p.create = append(p.create, newClaim(set, t, ordinal))
			case !c.DeletionTimestamp.IsZero():
				// Scaled down and up again before it went: it is made again once gone.
			default:
				p.inRange[name] = c
				if fixed, changed := adopted(set, c); changed {
					p.update = append(p.update, fixed)
				}
			}
		}
	}
	if retention(set).WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		return p
	}
	for _, c := range sortedClaims(byName) {
		n, ok := ordinalOf(set, c.Name)
		if ok && (n < start || n >= end) && c.Annotations[storagev1alpha1.StatefulSetAnnotation] == set.Name &&
			c.DeletionTimestamp.IsZero() && !foreign(set, c) {
			p.remove = append(p.remove, c)
		}
	}
	return p
}

// adopted is the claim of an ordinal in range as the set keeps it: marked as the set's, and
// owned per its retention policy unless the claim is foreign to it. changed is false when it
// already is.
func adopted(set *appsv1.StatefulSet, c *corev1.PersistentVolumeClaim) (*corev1.PersistentVolumeClaim, bool) {
	next := c.DeepCopy()
	metav1.SetMetaDataAnnotation(&next.ObjectMeta, storagev1alpha1.StatefulSetAnnotation, set.Name)
	if !foreign(set, c) {
		next.OwnerReferences = ownerRefs(set, c.OwnerReferences)
	}
	changed := c.Annotations[storagev1alpha1.StatefulSetAnnotation] != set.Name ||
		!slices.EqualFunc(c.OwnerReferences, next.OwnerReferences, sameRef)
	return next, changed
}

func sameRef(a, b metav1.OwnerReference) bool {
	return a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name && a.UID == b.UID &&
		ptr.Deref(a.Controller, false) == ptr.Deref(b.Controller, false) &&
		ptr.Deref(a.BlockOwnerDeletion, false) == ptr.Deref(b.BlockOwnerDeletion, false)
}

func sortedClaims(m map[string]*corev1.PersistentVolumeClaim) []*corev1.PersistentVolumeClaim {
	out := make([]*corev1.PersistentVolumeClaim, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// placement says, for each target the set is placed on and not yet synced to, whether it
// goes there now. The set is synced to a target only once each claim of an ordinal in range
// is there: synced to it and taken up by its syncer. A member's StatefulSet controller then
// finds every claim by name and makes none of its own, and, when the namespace moves, the
// pods start where their volumes already are. ready are the targets the set goes to; drop
// are the targets it leaves before it was ever synced there, whose state label only goes.
func placement(set metav1.Object, p plan) (ready, drop []string) {
	for _, key := range workloadv1alpha1.Targets(set) {
		on, _ := workloadv1alpha1.PresenceOn(set, key)
		switch {
		case on.Synced():
		case on.Leaving:
			drop = append(drop, key)
		case claimsOn(p, key):
			ready = append(ready, key)
		}
	}
	return ready, drop
}

// claimsOn tells whether every claim of an ordinal in range is on the target: synced there,
// not leaving, and its syncer's finalizer on it.
func claimsOn(p plan, key string) bool {
	for _, name := range p.want {
		c, ok := p.inRange[name]
		if !ok {
			return false
		}
		on, placed := workloadv1alpha1.PresenceOn(c, key)
		if !placed || !on.Synced() || on.Leaving || !on.Downstream {
			return false
		}
	}
	return true
}
