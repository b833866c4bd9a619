package simstorage

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
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
	// UnfencedWhileAttachedElsewhere: a member was unfenced while it still had an owned
	// volume attached that another unfenced member had attached too, so both could write.
	// A fencing flow prevents it by having the member let go before it is unfenced.
	UnfencedWhileAttachedElsewhere ViolationKind = "UnfencedWhileAttachedElsewhere"
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

// RefusalKind names a request the storage refused without any invariant being broken: a
// fenced member kept off the storage, or a write to a volume the member has not attached.
type RefusalKind string

const (
	// AttachFenced: a fenced member, or one powered off, asked to attach a volume.
	AttachFenced RefusalKind = "AttachFenced"
	// WriteFenced: a fenced member, or one powered off, wrote to a volume it has attached.
	WriteFenced RefusalKind = "WriteFenced"
	// WriteUnattached: a member wrote to a volume it does not have attached.
	WriteUnattached RefusalKind = "WriteUnattached"
)

// Refusal is one request the storage refused.
type Refusal struct {
	Kind    RefusalKind
	Handle  string
	Member  string
	Message string
	At      time.Time
}

// ErrWriteRefused is the storage's answer to a write it does not accept.
var ErrWriteRefused = errors.New("write refused by the storage")

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
func (v *Volume) Owned() bool { return Owned(v.AccessModes) }

// Owned tells whether a volume of these access modes may be held by one member at a time:
// ReadWriteOnce or ReadWriteOncePod.
func Owned(modes []corev1.PersistentVolumeAccessMode) bool {
	return slices.ContainsFunc(modes, func(m corev1.PersistentVolumeAccessMode) bool {
		return m == corev1.ReadWriteOnce || m == corev1.ReadWriteOncePod
	})
}

// pvRef names one PV object in one member.
type pvRef struct{ member, pv string }

// ledger is the storage's memory: volumes, where they are attached, what was written, which
// CIDRs are fenced, and what went wrong. Attaching, detaching, releasing, fencing and writing
// are steps the storage takes under its lock, so what it records is what it allowed or
// refused, in the order it did.
type ledger struct {
	mu         sync.Mutex
	volumes    map[string]*volumeState
	pvs        map[pvRef]string // the handle each PV the drivers saw refers to
	released   map[types.UID]bool
	nodes      map[string][]netip.Prefix // each member's node CIDRs
	fences     map[netip.Prefix]bool     // the CIDRs fenced now
	off        map[string]bool           // the members whose nodes are powered off
	violations []Violation
	refusals   []Refusal
	snapshots  map[string]*snapshotState // handle → a snapshot the storage cut
	cuts       map[string]string         // member/namespace/name of a VolumeSnapshot the storage cut → its handle
}

// snapshotState is the storage's record of one snapshot: the log of the volume it was cut
// from, as it was then.
type snapshotState struct {
	log     []string
	volume  string    // the handle of the volume it was cut from
	deleted time.Time // zero while it exists
}

type volumeState struct {
	Volume
	attached map[string]string // member → the PV through which it attached the volume
	refused  map[string]string // member → the kind of its refusal now, so retries record it once
	log      []string          // the records written; they go with the backing volume
	acked    []string          // every write acknowledged, to check the log against
}

func newLedger() *ledger {
	return &ledger{
		volumes: map[string]*volumeState{}, pvs: map[pvRef]string{}, released: map[types.UID]bool{},
		nodes: map[string][]netip.Prefix{}, fences: map[netip.Prefix]bool{}, off: map[string]bool{},
		snapshots: map[string]*snapshotState{}, cuts: map[string]string{},
	}
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
	l.volumes[v.Handle] = &volumeState{Volume: v, attached: map[string]string{}, refused: map[string]string{}}
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

// attach attaches the volume to member through its PV pv. A fenced member is refused, and so
// is an owned volume that another unfenced member has attached: a fenced holder cannot use
// the volume, so it does not keep it from others. Each refusal is recorded once until the
// member attaches or lets go; only the second case is a violation.
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
	if why := l.cutOffLocked(member); why != "" {
		if v.firstRefusal(member, string(AttachFenced)) {
			l.refuse(AttachFenced, handle, member, member+" is "+why)
		}
		return fmt.Errorf("volume %s: %w: %s is %s", handle, errRefused, member, why)
	}
	if others := slices.DeleteFunc(sortedKeys(v.attached), l.isCutOffLocked); v.Owned() && len(others) > 0 {
		if v.firstRefusal(member, string(AttachRefused)) {
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
// any member has the volume attached. It returns whether it recorded this PV's release, and
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
		if v.firstRefusal(member, string(ReleaseRefused)) {
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
	v.log = nil
	return true, refs, nil
}

// firstRefusal notes that member's request is refused for kind and tells whether that is
// news, so that a retried request is recorded once.
func (v *volumeState) firstRefusal(member, kind string) bool {
	if v.refused[member] == kind {
		return false
	}
	v.refused[member] = kind
	return true
}

// join records the node CIDRs of a member that reaches the storage.
func (l *ledger) join(member string, cidrs []string) error {
	prefixes, err := parsePrefixes(cidrs)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes[member] = prefixes
	return nil
}

// fence fences the CIDRs, or with fenced false unfences them, as a NetworkFence asks; it
// changes nothing if one is not a CIDR. A member that this unfences while it has an owned
// volume attached that another unfenced member has attached too is a violation.
func (l *ledger) fence(cidrs []string, fenced bool) error {
	prefixes, err := parsePrefixes(cidrs)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	was := slices.DeleteFunc(sortedKeys(l.nodes), func(m string) bool { return !l.isCutOffLocked(m) })
	for _, p := range prefixes {
		if fenced {
			l.fences[p] = true
		} else {
			delete(l.fences, p)
		}
	}
	for _, m := range slices.DeleteFunc(was, l.isCutOffLocked) {
		l.unfencedLocked(m)
	}
	return nil
}

// power powers the member's nodes off (on false) or on again. Nodes that are off reach the
// storage no more than fenced ones; powering on is checked as an unfence is.
func (l *ledger) power(member string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	was := l.isCutOffLocked(member)
	l.off[member] = !on
	if was && !l.isCutOffLocked(member) {
		l.unfencedLocked(member)
	}
}

// cutOffLocked tells why member cannot reach the storage: "fenced", "powered off", or ""
// when it can; the caller holds the lock.
func (l *ledger) cutOffLocked(member string) string {
	switch {
	case l.fencedLocked(member):
		return "fenced"
	case l.off[member]:
		return "powered off"
	}
	return ""
}

func (l *ledger) isCutOffLocked(member string) bool { return l.cutOffLocked(member) != "" }

// unfencedLocked records a violation for each owned volume that member, just unfenced, has
// attached while another unfenced member has it attached too; the caller holds the lock.
func (l *ledger) unfencedLocked(member string) {
	for _, handle := range sortedKeys(l.volumes) {
		v := l.volumes[handle]
		if _, ok := v.attached[member]; !ok || !v.Owned() {
			continue
		}
		others := slices.DeleteFunc(sortedKeys(v.attached), func(o string) bool { return o == member || l.isCutOffLocked(o) })
		if len(others) > 0 {
			l.violate(UnfencedWhileAttachedElsewhere, handle, append([]string{member}, others...),
				fmt.Sprintf("%s unfenced while it has an owned volume attached that %v attached too", member, others))
		}
	}
}

// fenced tells whether member is fenced.
// nodeCIDRs are member's node CIDRs, as it joined.
func (l *ledger) nodeCIDRs(member string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.nodes[member]))
	for _, p := range l.nodes[member] {
		out = append(out, p.String())
	}
	return out
}

func (l *ledger) fenced(member string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fencedLocked(member)
}

// fencedLocked tells whether one of member's node CIDRs lies within a fenced CIDR; the
// caller holds the lock.
func (l *ledger) fencedLocked(member string) bool {
	for _, node := range l.nodes[member] {
		for f := range l.fences {
			if f.Bits() <= node.Bits() && f.Contains(node.Addr()) {
				return true
			}
		}
	}
	return false
}

func parsePrefixes(cidrs []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(cidrs))
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, fmt.Errorf("invalid CIDR %q: %w", c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// write appends record to the volume's log for member and acknowledges it. It is accepted
// only while member has the volume attached and is neither fenced nor powered off; a
// refusal is recorded.
func (l *ledger) write(member, handle, record string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	attached := false
	if v != nil {
		_, attached = v.attached[member]
	}
	switch {
	case !attached:
		return l.refuseWrite(WriteUnattached, handle, member, "the volume is not attached to "+member)
	case l.isCutOffLocked(member):
		return l.refuseWrite(WriteFenced, handle, member, member+" is "+l.cutOffLocked(member))
	}
	v.log = append(v.log, record)
	v.acked = append(v.acked, record)
	return nil
}

func (l *ledger) refuseWrite(kind RefusalKind, handle, member, msg string) error {
	l.refuse(kind, handle, member, msg)
	return fmt.Errorf("volume %s: %w: %s", handle, ErrWriteRefused, msg)
}

// load replaces the volume's log with a copy of another's, as a replication writes it: the
// copied records were acknowledged where they were written, not here.
func (l *ledger) load(handle string, log []string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	if v == nil || !v.Deleted.IsZero() {
		return fmt.Errorf("volume %s does not exist", handle)
	}
	v.log = slices.Clone(log)
	return nil
}

// cut records the snapshot handle, cut from the volume of handle volume, which holds log, as
// the one the VolumeSnapshot at key (snapshotKey) asked for.
func (l *ledger) cut(key, handle, volume string, log []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.snapshots[handle] = &snapshotState{log: slices.Clone(log), volume: volume}
	l.cuts[key] = handle
}

// cutFor is the handle of the snapshot cut for the VolumeSnapshot at key, and the handle of
// the volume it was cut from.
func (l *ledger) cutFor(key string) (handle, volume string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	handle, ok = l.cuts[key]
	if ok {
		volume = l.snapshots[handle].volume
	}
	return handle, volume, ok
}

// snapshotLog is the log the snapshot of handle holds; false when the storage has no such
// snapshot, or deleted it.
func (l *ledger) snapshotLog(handle string) ([]string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	snap := l.snapshots[handle]
	if snap == nil || !snap.deleted.IsZero() {
		return nil, false
	}
	return slices.Clone(snap.log), true
}

// deleteSnapshot deletes the snapshot of handle.
func (l *ledger) deleteSnapshot(handle string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if snap := l.snapshots[handle]; snap != nil && snap.deleted.IsZero() {
		snap.deleted = time.Now()
	}
}

// records returns the volume's write log.
func (l *ledger) records(handle string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v := l.volumes[handle]; v != nil {
		return slices.Clone(v.log)
	}
	return nil
}

// checkWrites fails if an acknowledged write is missing from its volume's log.
func (l *ledger) checkWrites() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, handle := range sortedKeys(l.volumes) {
		v := l.volumes[handle]
		if lost := lostWrites(v.acked, v.log); len(lost) > 0 {
			errs = append(errs, fmt.Errorf("volume %s lost %d acknowledged writes, the first %q", handle, len(lost), lost[0]))
		}
	}
	return errors.Join(errs...)
}

// lostWritesOf returns the acknowledged writes the log of a volume that still exists lacks.
func (l *ledger) lostWritesOf(handle string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	if v == nil || !v.Deleted.IsZero() {
		return nil
	}
	return lostWrites(v.acked, v.log)
}

// holds tells whether member has the volume attached.
func (l *ledger) holds(member, handle string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.volumes[handle]
	if v == nil {
		return false
	}
	_, ok := v.attached[member]
	return ok
}

// lostWrites returns the acknowledged records that the log lacks.
func lostWrites(acked, log []string) []string {
	have := map[string]int{}
	for _, r := range log {
		have[r]++
	}
	var lost []string
	for _, r := range acked {
		if have[r] == 0 {
			lost = append(lost, r)
			continue
		}
		have[r]--
	}
	return lost
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

// refuse records a refusal; the caller holds the lock.
func (l *ledger) refuse(kind RefusalKind, handle, member, msg string) {
	l.refusals = append(l.refusals, Refusal{Kind: kind, Handle: handle, Member: member, Message: msg, At: time.Now()})
}

// listViolations returns every violation, oldest first.
func (l *ledger) listViolations() []Violation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.violations)
}

// listRefusals returns every refusal, oldest first.
func (l *ledger) listRefusals() []Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.refusals)
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
	return errors.Join(l.violationsLocked(kinds...)...)
}

// violationsLocked returns the violations of the given kinds; the caller holds the lock.
func (l *ledger) violationsLocked(kinds ...ViolationKind) []error {
	var errs []error
	for _, v := range l.violations {
		if slices.Contains(kinds, v.Kind) {
			errs = append(errs, errors.New(v.String()))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
