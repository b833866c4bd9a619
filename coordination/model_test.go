package coordination

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// The model is a small world around one hub claim: the hub objects as the coordinator and
// the syncers see them, the member copies, and the storage behind them. The syncers, the
// workload controller, the user, crashes and a switch of a LocationPair (which moves the
// namespace to a target of another storage domain and asks for a restore there) act in
// random order; after every step the
// invariants of package coordination are checked, and at the end the world must settle where
// it should.

// replicaTarget holds the replicas of a LocationPair in another storage domain (e); a switch
// of Locations moves the claim's namespace there and asks for a restore.
const replicaTarget = "z0"

const (
	sync   = workloadv1alpha1.ResourceStateSync
	upsync = workloadv1alpha1.ResourceStateUpsync
	retain = corev1.PersistentVolumeReclaimRetain
	del    = corev1.PersistentVolumeReclaimDelete
)

type memberPV struct {
	handle      int
	reclaim     corev1.PersistentVolumeReclaimPolicy
	provisioned bool // the member's own provisioner made it; not yet the hub's
}

type member struct {
	claim bool
	pv    *memberPV
}

type hubPV struct {
	handle   int
	bound    bool
	reclaim  corev1.PersistentVolumeReclaimPolicy
	deleting bool
	on       map[string]Presence
	// released and lastOwner: coordination kept the PV for the storage the deleted claim left.
	released  bool
	lastOwner string
}

type world struct {
	t      *testing.T
	rng    *rand.Rand
	keys   []string
	modes  []corev1.PersistentVolumeAccessMode
	owned  bool
	ready  map[string]bool
	record Record

	claimOn       map[string]Presence
	volumeName    bool
	deleting      bool
	finished      bool
	releasePolicy corev1.PersistentVolumeReclaimPolicy
	pv            *hubPV
	userRetain    bool
	// pvHolders are the targets the PV was ever labelled for, lastHolder the one whose label
	// went last; unheld is an owner that a crash kept from getting the PV a recorded decision
	// gave it.
	pvHolders          map[string]bool
	lastHolder, unheld string

	members  map[string]*member
	storage  map[int]bool // handle → released
	nextDisk int
	log      []string
	// switched: the namespace moved to replicaTarget, and the claim asks to be restored there.
	switched bool
}

func newWorld(t *testing.T, seed uint64, owned bool) *world {
	w := &world{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		keys: []string{"t0", "t1", "t2"}, owned: owned,
		ready: map[string]bool{}, claimOn: map[string]Presence{}, pvHolders: map[string]bool{},
		members: map[string]*member{}, storage: map[int]bool{},
	}
	w.modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	if owned {
		w.modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	for _, k := range append(slices.Clone(w.keys), replicaTarget) {
		w.ready[k] = true
		w.members[k] = &member{}
	}
	return w
}

// targets are the keys of every target, the replicas' one last.
func (w *world) targets() []string { return append(slices.Clone(w.keys), replicaTarget) }

func (w *world) logf(format string, args ...any) { w.log = append(w.log, fmt.Sprintf(format, args...)) }

func (w *world) fail(format string, args ...any) {
	w.t.Helper()
	w.t.Fatalf("%s\nlast steps:\n%s", fmt.Sprintf(format, args...), strings.Join(w.log[max(0, len(w.log)-40):], "\n"))
}

func (w *world) observe() Observation {
	o := Observation{
		Claim:   Claim{AccessModes: w.modes, Deleting: w.deleting, ReleasePolicy: w.releasePolicy, On: maps.Clone(w.claimOn)},
		Targets: map[string]Target{},
		Record:  w.record,
		Now:     time.Unix(3600, 0),
	}
	if w.volumeName {
		o.Claim.VolumeName = "pv"
	}
	if w.pv != nil {
		o.Volume = &Volume{Name: "pv", BoundToClaim: w.pv.bound, ReclaimPolicy: w.pv.reclaim, Deleting: w.pv.deleting,
			Released: w.pv.released, On: maps.Clone(w.pv.on)}
	}
	for _, k := range w.targets() {
		domain := "d"
		if k == replicaTarget {
			domain = "e"
		}
		t := Target{Ready: w.ready[k], Domains: []string{domain},
			Class: &workloadv1alpha1.StorageClassInfo{Name: "c", Provisioner: "p", ReclaimPolicy: del, Domain: domain}}
		if !t.Ready {
			// A target that does not answer is lost at once (its fence delay is zero): its
			// volumes wait for a Fence, which the model never gives, or a restore drops it.
			t.UnreachableSince = time.Unix(0, 0)
		}
		o.Targets[k] = t
	}
	if w.switched {
		o.Claim.Restore = &Restore{Target: replicaTarget, Snapshot: "snap"}
	}
	return o
}

// holding lists the targets with the claim synced or the PV labelled.
func (w *world) holding() []string {
	set := map[string]bool{}
	for k, p := range w.claimOn {
		if p.Synced() {
			set[k] = true
		}
	}
	if w.pv != nil {
		for k := range w.pv.on {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// coordinate runs Decide and applies its actions; a crash applies only the first few.
func (w *world) coordinate(crash bool) {
	if w.finished {
		return
	}
	d := Decide(w.observe())
	if !Allowed(w.record.Phase, d.Phase) {
		w.fail("transition %s → %s is not in the table", w.record.Phase, d.Phase)
	}
	w.record = Record{Owner: d.Owner, Phase: d.Phase, OriginalReclaim: d.Reclaim.Original, RestoredFrom: d.RestoredFrom, SetAside: d.SetAside}
	actions := d.Actions
	if crash {
		actions = actions[:w.rng.IntN(len(actions)+1)]
	}
	if slices.Contains(d.Actions[len(actions):], Action{Kind: SyncVolume, Target: d.Owner}) {
		w.unheld = d.Owner
	}
	w.logf("decide %s owner=%s %s %v", d.Phase, d.Owner, d.Reason, actions)
	for _, a := range actions {
		w.apply(a)
	}
}

func (w *world) apply(a Action) {
	if w.owned && (a.Kind == SyncClaim || a.Kind == SyncVolume) {
		if others := slices.DeleteFunc(w.holding(), func(k string) bool { return k == a.Target }); len(others) > 0 {
			w.fail("invariant 2: %s gets Sync while %v still hold the owned volume", a.Target, others)
		}
	}
	switch a.Kind {
	case SyncClaim:
		p := w.claimOn[a.Target]
		p.State = sync
		w.claimOn[a.Target] = p
	case DropClaim:
		delete(w.claimOn, a.Target)
	case DropTarget:
		delete(w.claimOn, a.Target)
		if w.pv != nil {
			delete(w.pv.on, a.Target)
		}
	case Hold, Unhold:
		if p, ok := w.claimOn[a.Target]; ok {
			p.Held = a.Kind == Hold
			w.claimOn[a.Target] = p
		}
	case SetReleasePolicy:
		w.releasePolicy = a.Policy
	case BindClaim:
		w.volumeName, w.pv.bound = true, true
	case SyncVolume:
		if a.Target == w.unheld {
			w.unheld = ""
		}
		w.pvHolders[a.Target] = true
		p := w.pv.on[a.Target]
		p.State, p.Leaving = sync, false
		w.pv.on[a.Target] = p
	case RemoveVolume:
		p := w.pv.on[a.Target]
		p.Leaving = true
		w.pv.on[a.Target] = p
	case DeleteVolume:
		w.pv.deleting = true
	case RetainVolume:
		if len(w.pv.on) > 0 {
			w.fail("hub PV kept as Released while %v hold it", slices.Sorted(maps.Keys(w.pv.on)))
		}
		w.pv.released, w.pv.lastOwner = true, a.Target
	case Finish:
		if w.pv != nil && !w.pv.released {
			w.fail("claim finished while its hub PV is neither gone nor kept as Released")
		}
		w.finished = true
	}
}

// place is the workload controller following a namespace that moved to the desired targets.
func (w *world) place(desired []string) {
	if w.deleting {
		return
	}
	for _, k := range desired {
		if _, ok := w.claimOn[k]; !ok {
			w.claimOn[k] = Presence{}
		}
	}
	for k, p := range w.claimOn {
		if !slices.Contains(desired, k) {
			p.Leaving = true
			w.claimOn[k] = p
		}
	}
	w.logf("place %v", desired)
}

// syncer is one step of target k's syncer, the member's binder and its provisioner.
func (w *world) syncer(k string) {
	m := w.members[k]
	if _, on := w.claimOn[k]; !on && (w.pv == nil || w.pv.on[k] == (Presence{})) && (m.claim || m.pv != nil) {
		// Copies the hub no longer gives the target, as after it was dropped: they go, and
		// their storage stays.
		m.claim, m.pv = false, nil
		w.logf("%s removed copies it no longer holds", k)
		return
	}
	if p, ok := w.claimOn[k]; ok && p.Synced() {
		leaving := p.Leaving || w.deleting
		if !leaving {
			w.syncClaim(k, m)
		}
		w.upsync(k, m)
		if leaving && !p.Held {
			w.removeClaim(k, m)
		}
	}
	if w.pv == nil {
		return
	}
	p, ok := w.pv.on[k]
	switch {
	case !ok:
	case p.Leaving || w.pv.deleting:
		if m.claim {
			return // the member's pv-protection waits for the claim
		}
		m.pv = nil
		delete(w.pv.on, k)
		w.lastHolder = k
		w.logf("%s removed its PV", k)
	case p.State == sync:
		if m.pv == nil {
			m.pv = &memberPV{handle: w.pv.handle}
			p.Downstream = true
			w.pv.on[k] = p
		}
		m.pv.reclaim, m.pv.provisioned = retain, false
	}
}

func (w *world) syncClaim(k string, m *member) {
	if !m.claim {
		m.claim = true
		p := w.claimOn[k]
		p.Downstream = true
		w.claimOn[k] = p
		// A claim pre-bound to the hub PV waits for it; only an unbound one is provisioned, or
		// one restored here from a replica.
		if m.pv == nil && (!w.volumeName || w.switched && k == replicaTarget) {
			w.nextDisk++
			w.storage[w.nextDisk] = false
			m.pv = &memberPV{handle: w.nextDisk, reclaim: del, provisioned: true}
			w.logf("%s provisioned disk %d", k, w.nextDisk)
		}
	}
}

// upsync brings a PV the member provisioned for the claim up to the hub.
func (w *world) upsync(k string, m *member) {
	if m.claim && m.pv != nil && m.pv.provisioned && w.pv == nil {
		w.pv = &hubPV{handle: m.pv.handle, bound: true, reclaim: del, on: map[string]Presence{k: {State: upsync, Downstream: true}}}
		w.pvHolders[k] = true
		w.logf("%s upsynced disk %d", k, m.pv.handle)
	}
}

// removeClaim applies the release policy to the member's PV, deletes the member's claim, and
// lets the member's provisioner release a PV whose policy is Delete.
func (w *world) removeClaim(k string, m *member) {
	if m.claim {
		if m.pv != nil {
			m.pv.reclaim = retain
			if w.deleting && w.releasePolicy != "" {
				m.pv.reclaim = w.releasePolicy
			}
		}
		m.claim = false
		if m.pv != nil && m.pv.reclaim == del {
			w.release(k, m.pv.handle)
			m.pv = nil
		}
	}
	delete(w.claimOn, k)
	w.logf("%s removed its claim", k)
}

func (w *world) release(k string, handle int) {
	if !w.deleting {
		w.fail("invariant 3: %s released disk %d of a claim that was not deleted", k, handle)
	}
	if others := slices.DeleteFunc(w.holding(), func(h string) bool { return h == k }); len(others) > 0 {
		w.fail("invariant 3: %s released disk %d while %v still hold it", k, handle, others)
	}
	if w.userRetain {
		w.fail("invariant 3: %s released disk %d although the hub PV says Retain", k, handle)
	}
	if w.storage[handle] {
		w.fail("disk %d released twice", handle)
	}
	w.storage[handle] = true
	w.logf("%s released disk %d", k, handle)
}

// check verifies invariants 1 and 4 in the current state.
func (w *world) check() {
	if h := w.holding(); w.owned && len(h) > 1 {
		w.fail("invariant 1: owned volume held by %v", h)
	}
	var copies []string
	for _, k := range w.keys {
		if w.members[k].pv != nil && !w.members[k].pv.provisioned {
			copies = append(copies, k)
		}
	}
	if len(copies) > 1 || w.record.Phase == storagev1alpha1.Moving {
		for _, k := range copies {
			if r := w.members[k].pv.reclaim; r != retain {
				w.fail("invariant 4: %s's copy is %s while the volume is on %v (phase %s)", k, r, copies, w.record.Phase)
			}
		}
	}
}

func (w *world) gc() {
	if w.pv != nil && w.pv.deleting && len(w.pv.on) == 0 {
		w.pv = nil
		w.logf("hub PV gone")
	}
}

// step runs one random event.
func (w *world) step() {
	switch n := w.rng.IntN(100); {
	case n < 35:
		w.coordinate(w.rng.IntN(5) == 0)
	case n < 75:
		w.syncer(w.keys[w.rng.IntN(len(w.keys))])
	case n < 85 && w.switched:
		w.place([]string{replicaTarget})
	case n < 85:
		var desired []string
		for _, k := range w.keys {
			if p, ok := w.claimOn[k]; !(ok && p.Leaving) && w.rng.IntN(2) == 0 {
				desired = append(desired, k)
			}
		}
		if w.owned && len(desired) > 1 {
			desired = desired[:1]
		}
		w.place(desired)
	case n < 90:
		k := w.keys[w.rng.IntN(len(w.keys))]
		w.ready[k] = !w.ready[k]
	case n < 92:
		if w.pv != nil && !w.userRetain && !w.deleting && w.rng.IntN(4) == 0 {
			w.userRetain, w.pv.reclaim = true, retain
			w.logf("user sets the hub PV to Retain")
		}
	case n < 94:
		if !w.deleting && !w.switched && w.rng.IntN(3) == 0 {
			w.deleting = true
			w.logf("user deletes the claim")
		}
	case n < 95:
		if !w.deleting && !w.switched && w.rng.IntN(3) == 0 {
			w.switched = true
			w.place([]string{replicaTarget})
			w.logf("the pair switches: restore on %s", replicaTarget)
		}
	default:
		w.gc()
	}
	w.check()
}

// settle runs the controllers until nothing changes, as the world does once events stop.
func (w *world) settle() {
	for _, k := range w.keys {
		w.ready[k] = true
	}
	for range 200 {
		w.coordinate(false)
		for _, k := range w.targets() {
			w.syncer(k)
		}
		w.gc()
		w.check()
	}
}

func TestInvariantsUnderRandomEventOrders(t *testing.T) {
	for _, owned := range []bool{true, false} {
		for seed := range uint64(3000) {
			w := newWorld(t, seed, owned)
			w.place([]string{w.keys[w.rng.IntN(len(w.keys))]})
			for range 150 {
				w.step()
			}
			desired := placedKeys(w.claimOn)
			w.settle()
			w.checkSettled(desired)
		}
	}
}

// checkSettled: a deleted claim is finished and its storage released unless the hub PV said
// Retain; a live claim is bound where its namespace is.
func (w *world) checkSettled(desired []string) {
	if w.deleting {
		if !w.finished {
			w.fail("deleted claim never finished (phase %s)", w.record.Phase)
		}
		// The kept disk is released unless the hub PV said Retain or the claim went while no
		// target held the volume, in which case the hub PV stays to say where the storage is.
		keep := w.userRetain || w.pv != nil
		if handle := w.firstDisk(); handle != 0 && w.storage[handle] == keep {
			w.fail("disk %d released=%v; hub PV Retain=%v, hub PV kept=%v", handle, w.storage[handle], w.userRetain, w.pv != nil)
		}
		// A Retain hub PV is always kept. A kept hub PV is Released and names a target that held
		// it: for an owned volume the last one (or the owner the record named when a crash kept
		// it from getting the volume).
		if w.userRetain && w.pv == nil {
			w.fail("the hub PV said Retain and was deleted")
		}
		if w.pv != nil {
			last := w.pv.lastOwner
			if !w.pv.released || !w.pvHolders[last] && last != w.unheld || w.owned && last != w.lastHolder && last != w.unheld {
				w.fail("hub PV kept: released=%v, last owner %q; held by %v, last by %q", w.pv.released, last, w.pvHolders, w.lastHolder)
			}
		}
		return
	}
	for handle, released := range w.storage {
		if released {
			w.fail("disk %d released while the claim lives", handle)
		}
	}
	if len(desired) == 0 {
		return
	}
	if w.record.Phase != storagev1alpha1.Bound {
		w.fail("settled in phase %s (%s), want Bound", w.record.Phase, Decide(w.observe()).Reason)
	}
	want := desired
	if w.owned {
		want = desired[:1]
	}
	if h := w.holding(); !slices.Equal(h, want) {
		w.fail("held by %v, want %v", h, want)
	}
	if w.switched && (w.record.RestoredFrom == nil || w.record.RestoredFrom.Target != replicaTarget) {
		w.fail("restored on %s, but the record says restored from %v", replicaTarget, w.record.RestoredFrom)
	}
}

// firstDisk is the disk the volume kept: the one the hub PV named, else the first.
func (w *world) firstDisk() int {
	first := 0
	for h := range w.storage {
		if first == 0 || h < first {
			first = h
		}
	}
	return first
}
