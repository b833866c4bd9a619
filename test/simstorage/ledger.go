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
	// AttachRefused: a member asked to attach an owned (ReadWriteOnce or ReadWriteOncePod)
	// volume that another member had attached. The storage refused, so no data was harmed,
	// but two members had the volume bound at once.
	AttachRefused ViolationKind = "AttachRefused"
	// ReleaseRefused: a member asked to delete a backing volume that another member had
	// attached. The storage refused.
	ReleaseRefused ViolationKind = "ReleaseRefused"
	// ReleasedWhileReferenced: the backing volume was deleted while a PV in another member
	// still referenced it.
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
	// Holders are the members the storage has the volume attached to now.
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

// ledger is the storage's memory: volumes, where they are attached, and what went wrong.
// Attaching, detaching and releasing are steps the storage takes under its lock, so what it
// records is what it allowed or refused, in the order it did.
type ledger struct {
	mu         sync.Mutex
	volumes    map[string]*volumeState
	pvs        map[pvRef]string // the handle each PV the drivers saw refers to
	released   map[types.UID]bool
	violations []Violation
}

type volumeState struct {
	Volume
	attached map[string]string // member → the PV through which it attached the volume
	refused  map[string]bool   // members whose attach is refused now, recorded once
}

func newLedger() *ledger {
	return &ledger{volumes: map[string]*volumeState{}, pvs: map[pvRef]string{}, released: map[types.UID]bool{}}
}

// errRefused is the storage's answer to an attach or a release it does not allow.
var errRefused = errors.New("refused by the storage")

// create records a new backing volume, or returns false if the handle exists.
func (l *ledger) create(v Volume) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.volumes[v.Handle]; ok {
		return false
	}
	l.volumes[v.Handle] = &volumeState{Volume: v, attached: map[string]string{}, refused: map[string]bool{}}
	return true
}

// see records that a member's PV refers to handle; handle "" means the PV is gone. A PV that
// is gone or now names another handle also lets go of the attachment made through it.
func (l *ledger) see(member, pv, handle string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ref := pvRef{member, pv}
	if old, ok := l.pvs[ref]; ok && old != handle {
		l.detachLocked(member, pv, old)
	}
	if handle == "" {
		delete(l.pvs, ref)
		return
	}
	l.pvs[ref] = handle
}

// attach attaches the volume to member through its PV pv. An owned volume attached to
// another member is refused, and the refusal recorded once until the member attaches or
// lets go.
func (l *ledger) attach(member, pv, handle string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	switch {
	case v == nil:
		return fmt.Errorf("volume %s: %w: no such volume", handle, errRefused)
	case !v.Deleted.IsZero():
		return fmt.Errorf("volume %s: %w: deleted at %s", handle, errRefused, v.Deleted.Format(time.RFC3339))
	}
	if _, ok := v.attached[member]; ok {
		v.attached[member] = pv
		return nil
	}
	if others := sortedKeys(v.attached); v.Owned() && len(others) > 0 {
		if !v.refused[member] {
			v.refused[member] = true
			l.violate(AttachRefused, handle, append(others, member), fmt.Sprintf("%s asked to attach an owned volume attached to %v", member, others))
		}
		return fmt.Errorf("volume %s: %w: attached to %v", handle, errRefused, others)
	}
	delete(v.refused, member)
	v.attached[member] = pv
	return nil
}

// detach lets go of the volume's attachment to member, if its PV pv made it.
func (l *ledger) detach(member, pv, handle string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.detachLocked(member, pv, handle)
}

func (l *ledger) detachLocked(member, pv, handle string) {
	v := l.volumes[handle]
	if v == nil {
		return
	}
	if v.attached[member] == pv {
		delete(v.attached, member)
	}
	delete(v.refused, member)
}

// release deletes the backing volume for the released PV pv of member. It refuses while
// another member has the volume attached. It returns whether it deleted the volume now, and
// the other PVs that the drivers last saw referring to it, for referenced to confirm: a PV
// released twice is one release, as the driver sees a released PV again until its deletion
// shows.
func (l *ledger) release(member string, pv *corev1.PersistentVolume, handle string) (bool, []pvRef, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	if v == nil || l.released[pv.UID] {
		return false, nil, nil
	}
	if !v.Deleted.IsZero() {
		l.released[pv.UID] = true
		v.Releases++
		l.violate(ReleasedTwice, handle, []string{member}, fmt.Sprintf("PV %s released a volume deleted at %s", pv.Name, v.Deleted.Format(time.RFC3339)))
		return true, nil, nil
	}
	if others := sortedKeys(v.attached); len(others) > 0 {
		if !v.refused[member] {
			v.refused[member] = true
			l.violate(ReleaseRefused, handle, others, fmt.Sprintf("released through %s/%s while attached to %v", member, pv.Name, others))
		}
		return false, nil, fmt.Errorf("volume %s: %w: attached to %v", handle, errRefused, others)
	}
	var refs []pvRef
	for ref, h := range l.pvs {
		if h == handle && ref != (pvRef{member, pv.Name}) {
			refs = append(refs, ref)
		}
	}
	l.released[pv.UID] = true
	v.Releases++
	v.Deleted = time.Now()
	return true, refs, nil
}

// referenced records that the volume was released through member's PV while the PVs others
// (member/name) still referred to it.
func (l *ledger) referenced(handle, member, pv string, others []string) {
	if len(others) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	sort.Strings(others)
	l.violate(ReleasedWhileReferenced, handle, others, fmt.Sprintf("released through %s/%s while still referenced", member, pv))
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
	s.Holders = sortedKeys(v.attached)
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
