package simstorage

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// ViolationKind names an invariant the storage saw broken.
type ViolationKind string

const (
	// DoubleHold: an owned (ReadWriteOnce or ReadWriteOncePod) volume was held by two members
	// at once.
	DoubleHold ViolationKind = "DoubleHold"
	// ReleasedWhileReferenced: the backing volume was deleted while a PV in some member still
	// referenced it.
	ReleasedWhileReferenced ViolationKind = "ReleasedWhileReferenced"
	// ReleasedTwice: a PV asked for the deletion of a volume that was already deleted.
	ReleasedTwice ViolationKind = "ReleasedTwice"
)

// Violation is one breach of an invariant, as the storage saw it.
type Violation struct {
	Kind    ViolationKind
	Handle  string
	Members []string
	Message string
	At      time.Time
}

func (v Violation) String() string {
	return fmt.Sprintf("%s %s %v: %s", v.Kind, v.Handle, v.Members, v.Message)
}

// Volume is the storage's record of one backing volume.
type Volume struct {
	Handle      string
	Capacity    resource.Quantity
	AccessModes []corev1.PersistentVolumeAccessMode
	// ProvisionedIn is the member whose PVC asked for the volume.
	ProvisionedIn string
	// Holders are the members where a PV with the handle is Bound now.
	Holders []string
	// Deleted is when the backing volume was deleted; zero while it exists.
	Deleted time.Time
	// Releases counts the deletions asked for, so a double release shows.
	Releases int
}

// Owned tells whether at most one member may hold the volume at a time.
func (v *Volume) Owned() bool {
	return slices.ContainsFunc(v.AccessModes, func(m corev1.PersistentVolumeAccessMode) bool {
		return m == corev1.ReadWriteOnce || m == corev1.ReadWriteOncePod
	})
}

// pvRef names one PV object in one member.
type pvRef struct{ member, pv string }

// ledger is the storage's memory: volumes, who holds them, and what went wrong.
type ledger struct {
	mu         sync.Mutex
	volumes    map[string]*volumeState
	pvs        map[pvRef]string // the handle each PV refers to
	released   map[types.UID]bool
	violations []Violation
}

type volumeState struct {
	Volume
	holders map[string]string // member → bound PV
}

func newLedger() *ledger {
	return &ledger{volumes: map[string]*volumeState{}, pvs: map[pvRef]string{}, released: map[types.UID]bool{}}
}

// create records a new backing volume, or returns false if the handle exists.
func (l *ledger) create(v Volume) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.volumes[v.Handle]; ok {
		return false
	}
	l.volumes[v.Handle] = &volumeState{Volume: v, holders: map[string]string{}}
	return true
}

// observe records what a member's PV says: its handle and whether it is bound. bound=false
// with handle "" means the PV is gone.
func (l *ledger) observe(member, pv, handle string, bound bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := pvRef{member, pv}
	if old, ok := l.pvs[ref]; ok && (old != handle || !bound) {
		if v := l.volumes[old]; v != nil && v.holders[member] == pv {
			delete(v.holders, member)
		}
	}
	if handle == "" {
		delete(l.pvs, ref)
		return
	}
	l.pvs[ref] = handle
	v := l.volumes[handle]
	if v == nil || !bound {
		return
	}
	v.holders[member] = pv
	if v.Owned() && len(v.holders) > 1 {
		l.violate(DoubleHold, handle, sortedKeys(v.holders), "an owned volume is bound in more than one member")
	}
}

// release deletes the backing volume for the released PV pv of member, after checking that
// no other PV refers to it. It returns false when this PV was already handled: the driver
// sees a released PV again until its deletion shows, and that is one release, not two.
func (l *ledger) release(member string, pv *corev1.PersistentVolume, handle string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	if v == nil || l.released[pv.UID] {
		return false
	}
	l.released[pv.UID] = true
	v.Releases++
	if !v.Deleted.IsZero() {
		l.violate(ReleasedTwice, handle, []string{member}, fmt.Sprintf("PV %s released a volume deleted at %s", pv.Name, v.Deleted.Format(time.RFC3339)))
		return true
	}
	var others []string
	for ref, h := range l.pvs {
		if h == handle && ref != (pvRef{member, pv.Name}) {
			others = append(others, ref.member+"/"+ref.pv)
		}
	}
	if len(others) > 0 {
		sort.Strings(others)
		l.violate(ReleasedWhileReferenced, handle, others, fmt.Sprintf("released through %s/%s while still referenced", member, pv.Name))
	}
	v.Deleted = time.Now()
	return true
}

// violate records a violation; the caller holds the lock.
func (l *ledger) violate(kind ViolationKind, handle string, members []string, msg string) {
	l.violations = append(l.violations, Violation{Kind: kind, Handle: handle, Members: members, Message: msg, At: time.Now()})
}

func (l *ledger) volume(handle string) (Volume, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.volumes[handle]
	if !ok {
		return Volume{}, false
	}
	return v.snapshot(), true
}

func (l *ledger) list() []Volume {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Volume, 0, len(l.volumes))
	for _, v := range l.volumes {
		out = append(out, v.snapshot())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Handle < out[j].Handle })
	return out
}

func (v *volumeState) snapshot() Volume {
	s := v.Volume
	s.AccessModes = slices.Clone(v.AccessModes)
	s.Holders = sortedKeys(v.holders)
	return s
}

// check returns the violations of the given kinds as one error, or nil.
func (l *ledger) check(kinds ...ViolationKind) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, v := range l.violations {
		if slices.Contains(kinds, v.Kind) {
			errs = append(errs, errors.New(v.String()))
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
