package v1alpha1

import (
	"crypto/sha256"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The protocol on hub objects. For each target key <t>:
//
//	state.workload.custody.dev/<t>              label       "" placed, waiting for coordination;
//	                                                        Sync: the hub is the source;
//	                                                        Upsync: <t> is the source (exclusive)
//	finalizers.workload.custody.dev/<t>         annotation  coordination finalizers holding back
//	                                                        removal from <t>
//	deletion.internal.workload.custody.dev/<t>  annotation  RFC 3339 time removal was requested
//	workload.custody.dev/syncer-<t>             finalizer   the syncer's hold until the
//	                                                        downstream copy is gone
//
// Every component reads and writes these keys through the functions of this file only, so
// that each value has one meaning everywhere:
//
//   - a state label with a value other than "", Sync or Upsync reads as "" (placed, synced by
//     no one) until coordination writes a state it knows;
//   - a deletion annotation means removal was requested whatever its value; a value that is
//     not an RFC 3339 time gives the request no time;
//   - the finalizers annotation is a comma-separated list; blanks around names and empty
//     names are dropped, and an empty list holds nothing.
const (
	stateLabelPrefix           = "state.workload.custody.dev/"
	finalizersAnnotationPrefix = "finalizers.workload.custody.dev/"
	deletionAnnotationPrefix   = "deletion.internal.workload.custody.dev/"
	syncerFinalizerPrefix      = "workload.custody.dev/syncer-"
)

// ResourceState is the value of a state label.
type ResourceState string

const (
	// ResourceStatePending: placed on the target, waiting for coordination to decide.
	ResourceStatePending ResourceState = ""
	// ResourceStateSync: the hub is the source; the target's syncer keeps the target in line.
	ResourceStateSync ResourceState = "Sync"
	// ResourceStateUpsync: the target is the source; exclusive.
	ResourceStateUpsync ResourceState = "Upsync"
)

// parseState gives a state label's value its meaning: an unknown value is Pending.
func parseState(v string) ResourceState {
	switch s := ResourceState(v); s {
	case ResourceStateSync, ResourceStateUpsync:
		return s
	}
	return ResourceStatePending
}

// StateLabel is the state label key for a target key.
func StateLabel(key string) string { return stateLabelPrefix + key }

// FinalizersAnnotation is the coordination finalizers annotation key for a target key.
func FinalizersAnnotation(key string) string { return finalizersAnnotationPrefix + key }

// DeletionAnnotation is the removal-requested annotation key for a target key.
func DeletionAnnotation(key string) string { return deletionAnnotationPrefix + key }

// SyncerFinalizer is the syncer's finalizer for a target key.
func SyncerFinalizer(key string) string { return syncerFinalizerPrefix + key }

// IsStateLabel tells whether a label key is a state label of some target.
func IsStateLabel(k string) bool { return strings.HasPrefix(k, stateLabelPrefix) }

// IsProtocolKey tells whether a label or annotation key belongs to the per-target protocol:
// it speaks to the syncers and coordination on the hub and means nothing in a member.
func IsProtocolKey(k string) bool {
	for _, p := range []string{stateLabelPrefix, finalizersAnnotationPrefix, deletionAnnotationPrefix, PVNameAnnotationPrefix} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Presence is an object's standing on one target, as the protocol says it. An object has a
// Presence for a target only while it carries the target's state label.
// +kubebuilder:object:generate=false
type Presence struct {
	State ResourceState
	// Leaving: the object's removal from the target was requested.
	Leaving bool
	// LeavingSince is when the removal was requested; zero when the annotation gives no time.
	LeavingSince time.Time
	// Finalizers are the coordination finalizers holding back the removal.
	Finalizers []string
	// Downstream: the target's syncer finalizer is on the object: its syncer made the copy
	// in the member, and has not yet removed it.
	Downstream bool
}

// Synced tells whether the target's syncer works on the object (Sync or Upsync).
func (p Presence) Synced() bool { return p.State != ResourceStatePending }

// Held tells whether any coordination finalizer holds back the removal.
func (p Presence) Held() bool { return len(p.Finalizers) > 0 }

// HeldBy tells whether the named coordination finalizer holds back the removal.
func (p Presence) HeldBy(finalizer string) bool { return slices.Contains(p.Finalizers, finalizer) }

// PresenceOn reads the object's standing on one target; ok is false when the object carries
// no state label for it.
func PresenceOn(obj metav1.Object, key string) (_ Presence, ok bool) {
	v, ok := obj.GetLabels()[StateLabel(key)]
	if !ok {
		return Presence{}, false
	}
	p := Presence{State: parseState(v), Finalizers: finalizers(obj, key)}
	p.Leaving, p.LeavingSince = RemovalRequested(obj, key)
	p.Downstream = slices.Contains(obj.GetFinalizers(), SyncerFinalizer(key))
	return p, true
}

// Presences reads the object's standing on every target it carries a state label for.
func Presences(obj metav1.Object) map[string]Presence {
	out := map[string]Presence{}
	for _, key := range Targets(obj) {
		out[key], _ = PresenceOn(obj, key)
	}
	return out
}

// Targets returns the keys of every target the object carries a state label for, sorted.
func Targets(obj metav1.Object) []string {
	var keys []string
	for k := range obj.GetLabels() {
		if key, ok := strings.CutPrefix(k, stateLabelPrefix); ok {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// ActiveTargets returns the keys of the targets the object is on and not leaving, sorted.
func ActiveTargets(obj metav1.Object) []string {
	return slices.DeleteFunc(Targets(obj), func(key string) bool {
		leaving, _ := RemovalRequested(obj, key)
		return leaving
	})
}

// StaleRemovals returns the keys whose deletion annotation outlived the state label: the
// removal is done, and the annotation should go. Sorted.
func StaleRemovals(obj metav1.Object) []string {
	var keys []string
	for a := range obj.GetAnnotations() {
		if key, ok := strings.CutPrefix(a, deletionAnnotationPrefix); ok {
			if _, labelled := obj.GetLabels()[StateLabel(key)]; !labelled {
				keys = append(keys, key)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// RemovalRequested tells whether the object's removal from the target was requested, and
// when; the time is zero when the annotation does not give one.
func RemovalRequested(obj metav1.Object, key string) (bool, time.Time) {
	v, ok := obj.GetAnnotations()[DeletionAnnotation(key)]
	if !ok {
		return false, time.Time{}
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return true, time.Time{}
	}
	return true, t
}

// StatusReporter returns the key of the target that reports the hub object's status: the
// smallest key among those in Sync and not leaving, else among those in Sync; "" when none is.
// An object synced to several targets has one status on the hub, and two reporters would
// overwrite each other without end. A target the object leaves no longer runs it for the hub:
// one lost, which cannot let go, would otherwise keep the status while the object runs on
// the target it moved to.
func StatusReporter(obj metav1.Object) string {
	var leaving string
	for _, key := range Targets(obj) {
		if parseState(obj.GetLabels()[StateLabel(key)]) != ResourceStateSync {
			continue
		}
		if _, asked := obj.GetAnnotations()[DeletionAnnotation(key)]; !asked {
			return key
		}
		if leaving == "" {
			leaving = key
		}
	}
	return leaving
}

func finalizers(obj metav1.Object, key string) []string {
	var out []string
	for _, f := range strings.Split(obj.GetAnnotations()[FinalizersAnnotation(key)], ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// SetState sets the object's state label for the target.
func SetState(obj metav1.Object, key string, s ResourceState) {
	setEntry(obj.GetLabels, obj.SetLabels, StateLabel(key), string(s))
}

// Release drops the object's state label and deletion annotation for the target: the object
// left it.
func Release(obj metav1.Object, key string) {
	deleteEntry(obj.GetLabels, obj.SetLabels, StateLabel(key))
	CancelRemoval(obj, key)
}

// RequestRemoval requests the object's removal from the target, at t.
func RequestRemoval(obj metav1.Object, key string, t time.Time) {
	setEntry(obj.GetAnnotations, obj.SetAnnotations, DeletionAnnotation(key), t.UTC().Format(time.RFC3339))
}

// CancelRemoval drops the request of the object's removal from the target.
func CancelRemoval(obj metav1.Object, key string) {
	deleteEntry(obj.GetAnnotations, obj.SetAnnotations, DeletionAnnotation(key))
}

// SetHold adds the coordination finalizer for the target to the object, or removes it; the
// annotation goes with the last finalizer. It tells whether anything changed.
func SetHold(obj metav1.Object, key, finalizer string, held bool) bool {
	list := finalizers(obj, key)
	if slices.Contains(list, finalizer) == held {
		return false
	}
	list = slices.DeleteFunc(list, func(f string) bool { return f == finalizer })
	if held {
		list = append(list, finalizer)
	}
	if len(list) == 0 {
		deleteEntry(obj.GetAnnotations, obj.SetAnnotations, FinalizersAnnotation(key))
	} else {
		setEntry(obj.GetAnnotations, obj.SetAnnotations, FinalizersAnnotation(key), strings.Join(list, ","))
	}
	return true
}

// Drop takes everything of the target off the object, in its syncer's place, as for a
// target that is fenced or removed: the state label and removal request, every coordination
// finalizer holding it there (whoever's: the target is gone from the object, and so are the
// holds on it), and the syncer's finalizer. The finalizers go also from an object that no
// longer carries the state label.
func Drop(obj metav1.Object, key string) {
	held := finalizers(obj, key)
	Release(obj, key)
	for _, f := range held {
		SetHold(obj, key, f, false)
	}
	if fins := obj.GetFinalizers(); slices.Contains(fins, SyncerFinalizer(key)) {
		obj.SetFinalizers(slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == SyncerFinalizer(key) }))
	}
}

// SyncerFinalizerKey is the target key a syncer finalizer names; ok is false for any other
// finalizer.
func SyncerFinalizerKey(finalizer string) (key string, ok bool) {
	return strings.CutPrefix(finalizer, syncerFinalizerPrefix)
}

// Change is what an object's metadata needs to follow its namespace.
// +kubebuilder:object:generate=false
type Change struct {
	// Place are the targets the object goes to, with its first state there.
	Place map[string]ResourceState
	// Leave are the targets the object leaves, with the time their removal was requested.
	Leave map[string]time.Time
	// Return are the targets whose removal request, left from an earlier removal, goes
	// because the object returns there.
	Return []string
}

// Empty tells whether the object already follows its namespace.
func (c Change) Empty() bool {
	return len(c.Place)+len(c.Leave)+len(c.Return) == 0
}

// Propagate computes the change that makes an object follow its namespace: a state for
// every target the namespace is on (Sync, or Pending when coordination decides), the
// namespace's removal request for every target the namespace leaves, and a removal request
// from now for every target the namespace already left (its removal finished before the
// object was marked, as when the namespace moved on twice while the object's updates
// conflicted): the object would stay there for ever.
func Propagate(ns, obj metav1.Object, coordinated bool, now time.Time) Change {
	c := Change{Place: map[string]ResourceState{}, Leave: map[string]time.Time{}}
	initial := ResourceStateSync
	if coordinated {
		initial = ResourceStatePending
	}
	nsPresences, objPresences := Presences(ns), Presences(obj)
	for key, objOn := range objPresences {
		if _, nsOn := nsPresences[key]; !nsOn && !objOn.Leaving {
			c.Leave[key] = now
		}
	}
	for key, nsOn := range nsPresences {
		_, placed := objPresences[key]
		// A removal request outlives the state label: a returning object loses it.
		objLeaving, _ := RemovalRequested(obj, key)
		switch {
		case nsOn.Leaving && placed && !objLeaving:
			c.Leave[key] = nsOn.LeavingSince
		case !nsOn.Leaving && !placed:
			c.Place[key] = initial
			if objLeaving {
				c.Return = append(c.Return, key)
			}
		}
	}
	return c
}

// Apply writes the change into the object's metadata.
func (c Change) Apply(obj metav1.Object) {
	for key, s := range c.Place {
		SetState(obj, key, s)
	}
	for key, t := range c.Leave {
		RequestRemoval(obj, key, t)
	}
	for _, key := range c.Return {
		CancelRemoval(obj, key)
	}
}

func setEntry(get func() map[string]string, set func(map[string]string), k, v string) {
	m := get()
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	set(m)
}

func deleteEntry(get func() map[string]string, set func(map[string]string), k string) {
	if m := get(); m != nil {
		delete(m, k)
		set(m)
	}
}

// maxKeyLength keeps SyncerFinalizer's name part ("syncer-<key>") within 63 characters.
const maxKeyLength = 56

var readableKey = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ToSyncTargetKey derives the target key from a SyncTarget's name: the name itself when it
// is short and has no dots, so that labels stay readable, else a prefix of it and a hash of
// the whole name. The same name always gives the same key.
func ToSyncTargetKey(name string) string {
	if len(name) <= maxKeyLength && readableKey.MatchString(name) {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	hash := new(big.Int).SetBytes(sum[:]).Text(36)[:12]
	prefix := strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(name)), "-")
	if len(prefix) > maxKeyLength-len(hash)-1 {
		prefix = strings.TrimRight(prefix[:maxKeyLength-len(hash)-1], "-")
	}
	if prefix == "" {
		return hash
	}
	return prefix + "-" + hash
}

// TargetWithKey is the target among targets whose key (ToSyncTargetKey) is key; nil when
// there is none.
func TargetWithKey(targets []SyncTarget, key string) *SyncTarget {
	for i := range targets {
		if ToSyncTargetKey(targets[i].Name) == key {
			return &targets[i]
		}
	}
	return nil
}
