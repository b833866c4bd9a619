package dr

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

// The model is a small world around one LocationPair, east (e1, e2) and west (w1, w2), and
// the two claims of a namespace: the targets' health and Fences, the replications' syncs and
// images, the workloads' writes, the restores, and what the dr controller recorded of the
// pair. Targets going down and coming back, Fences taking hold, clean reports, syncs, images
// turning ready, workloads stopping, restores, declared switches, the passing of time and
// crashes of the controller between its writes happen in random order. After every decision
// its change of progression must be one the Transitions table allows, the active Location
// must change only as a switch restores, and a failover must restore nothing while the
// Location it leaves answers unfenced; a restore must lose no write, but a failover's of a
// volume of the Location it leaves. Once every target is back and events stop, the pair must
// settle: no action under way, protecting, every claim with a replica in the active Location
// bound there, and every other claim told that it has none there.

// modelLocations are the world's Locations and their targets.
var modelLocations = map[string][]string{"east": {"e1", "e2"}, "west": {"w1", "w2"}}

type modelTarget struct {
	ready              bool
	downSince, upSince time.Time
	fence              fencing.State
	reported           time.Time
}

type modelVolume struct {
	Volume
	want *Want
	// data counts the writes its owner acknowledged, and snaps the writes each snapshot holds.
	data  int
	snaps map[string]int
	// stopped: its workload is quiesced.
	stopped bool
}

type model struct {
	t       *testing.T
	rng     *rand.Rand
	now     time.Time
	pair    Pair
	active  string
	action  *schedulingv1alpha1.PairAction
	targets map[string]*modelTarget
	volumes []*modelVolume
	// quiesce is what the controller last asked of the workloads, and phase the pair's phase.
	quiesce bool
	phase   schedulingv1alpha1.LocationPairPhase
	// snaps numbers the snapshots the syncs take.
	snaps int
	log   []string
}

func newModel(t *testing.T, seed uint64) *model {
	m := &model{
		t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), now: time.Unix(1_000_000, 0),
		pair: Pair{Primary: "east", Secondary: "west", Generation: 1, Mode: schedulingv1alpha1.Relocate, Automatic: true,
			Threshold: time.Minute, Interval: 5 * time.Minute},
		targets: map[string]*modelTarget{},
	}
	for _, keys := range modelLocations {
		for _, k := range keys {
			m.targets[k] = &modelTarget{ready: true, upSince: m.now.Add(-time.Hour), reported: m.now.Add(-time.Minute)}
		}
	}
	for i, owner := range []string{"e1", "e2"} {
		m.volumes = append(m.volumes, &modelVolume{Volume: Volume{Namespace: "ns", Claim: fmt.Sprint("c", i), Owner: owner, Bound: true},
			snaps: map[string]int{}})
	}
	return m
}

// logf logs a step, once for steps that repeat.
func (m *model) logf(format string, args ...any) {
	if s := fmt.Sprintf(format, args...); len(m.log) == 0 || m.log[len(m.log)-1] != s {
		m.log = append(m.log, s)
	}
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s\nlast steps:\n%s", fmt.Sprintf(format, args...), strings.Join(m.log[max(0, len(m.log)-40):], "\n"))
}

// locationOf is the Location of a target key.
func locationOf(key string) string {
	for name, keys := range modelLocations {
		if slices.Contains(keys, key) {
			return name
		}
	}
	return ""
}

func (m *model) observe() Observation {
	o := Observation{Now: m.now, Pair: m.pair, Active: m.active, Action: m.action.DeepCopy(), Locations: map[string]Location{}}
	for name, keys := range modelLocations {
		l := Location{Name: name, Found: true}
		for _, k := range keys {
			t := m.targets[k]
			target := Target{Key: k, Ready: t.ready, Fence: t.fence, Clean: true, Reported: t.reported, Classes: []string{"fast"}, DefaultClass: "fast"}
			if t.ready {
				target.ReadySince = t.upSince
			} else {
				target.UnreachableSince = t.downSince
			}
			l.Targets = append(l.Targets, target)
		}
		o.Locations[name] = l
	}
	for _, v := range m.volumes {
		seen := v.Volume
		if r := v.Replication; r != nil {
			c := *r
			seen.Replication = &c
		}
		o.Volumes = append(o.Volumes, seen)
	}
	o.Quiesced = !slices.ContainsFunc(o.Volumes, func(v Volume) bool { return v.Replication != nil && !v.Replication.Quiesced })
	return o
}

// decide runs Decide and carries out the decision as the controller does: the replicas and
// the status first, then the Fences, the replications, the restores and the quiesce; a crash
// carries out only the first few of these.
func (m *model) decide(crash bool) {
	o := m.observe()
	d := Decide(o)
	m.checkDecision(o, d)
	m.active, m.action, m.phase = d.Active, d.Action, d.Phase
	for _, v := range m.volumes {
		if r, ok := d.Replicas[v.Key()]; ok {
			v.Replica = &r
		}
	}
	m.logf("decide %s active=%s action=%s quiesce=%t fence=%v restores=%v", d.Phase, d.Active, describe(d.Action), d.Quiesce, d.Fence, d.Restores)
	effects := []func(Decision){m.fence, m.replicate, m.askRestores, func(d Decision) { m.quiesce = d.Quiesce }}
	if crash {
		effects = effects[:m.rng.IntN(len(effects)+1)]
		m.logf("the controller crashes after %d of its writes", len(effects))
	}
	for _, apply := range effects {
		apply(d)
	}
}

func describe(a *schedulingv1alpha1.PairAction) string {
	if a == nil {
		return "none"
	}
	return fmt.Sprintf("%s %s→%s %s", a.Mode, a.From, a.To, a.Progression)
}

// checkDecision checks what a decision may do, whatever the world looks like.
func (m *model) checkDecision(o Observation, d Decision) {
	m.t.Helper()
	from, to := progression(o.Action), progression(d.Action)
	if !Allowed(from, to) {
		m.fail("%q → %q is not an allowed change of progression", from, to)
	}
	a := d.Action
	restoring := a != nil && (a.Progression == schedulingv1alpha1.ProgressionRestoring || a.Progression == schedulingv1alpha1.ProgressionCompleted)
	if d.Active != o.Active && o.Active != "" && !(restoring && d.Active == a.To) {
		m.fail("the active Location went from %s to %s with the action %s", o.Active, d.Active, describe(a))
	}
	if a != nil && d.Active == a.To && o.Active != a.To {
		for k, r := range d.Restores {
			if r != "" {
				m.fail("the namespaces go to %s before %s is seen asked to restore from %s", a.To, k, r)
			}
		}
	}
	wasRestoring := o.Action != nil && a != nil && o.Action.StartTime.Equal(&a.StartTime) &&
		(from == schedulingv1alpha1.ProgressionRestoring || from == schedulingv1alpha1.ProgressionCompleted)
	if restoring && !wasRestoring && a.Mode == schedulingv1alpha1.Failover {
		for _, t := range o.Locations[a.From].Targets {
			if t.Ready && !t.Fence.Holds() {
				m.fail("the failover from %s restores while %s answers unfenced (%s)", a.From, t.Key, t.Fence)
			}
		}
	}
}

// fence asks for the decision's Fences, and lifts the others.
func (m *model) fence(d Decision) {
	for k, t := range m.targets {
		switch asked := slices.Contains(d.Fence, k); {
		case asked && t.fence == fencing.Unfenced:
			t.fence = fencing.Fencing
		case !asked:
			t.fence = fencing.Unfenced
		}
	}
}

// replicate keeps the decision's replications: a volume whose source or destination changed
// starts a new one, with nothing synced yet.
func (m *model) replicate(d Decision) {
	for _, v := range m.volumes {
		i := slices.IndexFunc(d.Replications, func(w Want) bool { return w.Namespace == v.Namespace && w.Claim == v.Claim })
		if i < 0 {
			v.want, v.Replication = nil, nil
			continue
		}
		w := d.Replications[i]
		if r := v.Replication; r == nil || r.Source != w.Source || r.Destination != w.Destination {
			v.Replication = &Replication{Source: w.Source, Destination: w.Destination}
		}
		v.want = &w
		v.Replication.KeepImages = w.KeepImages
		v.Replication.ImageKept = v.Replication.ImageKept || w.KeepImages && v.Replication.Image != nil
	}
}

// askRestores writes the decision's restore annotations: a claim asked to restore, or told it
// has no replica, leaves its volume; one whose restore is over binds again where it is, when
// that is in the active Location.
func (m *model) askRestores(d Decision) {
	for _, v := range m.volumes {
		if want, ok := d.Restores[v.Key()]; ok {
			v.Restore, v.Bound = &want, false
		}
		if slices.Contains(d.Unrestores, v.Key()) {
			v.Restore = nil
			v.Bound = v.Bound || locationOf(v.Owner) == m.active
		}
	}
}

// writable: the volume's workload runs and its owner writes: the owner answers, no Fence holds
// it, it is in the active Location and the workload is not quiesced.
func (m *model) writable(v *modelVolume) bool {
	t := m.targets[v.Owner]
	return v.Bound && !v.stopped && t.ready && !t.fence.Holds() && locationOf(v.Owner) == m.active
}

// sync runs one sync of the volume's replication, unless its manual trigger was answered:
// the destination takes a snapshot of what the source holds, ready now or later.
func (m *model) sync(v *modelVolume) {
	r, w := v.Replication, v.want
	if r == nil || w == nil || w.ManualTrigger != "" && r.LastManualSync == w.ManualTrigger {
		return
	}
	src, dst := m.targets[r.Source], m.targets[r.Destination]
	if !src.ready || src.fence.Holds() || !dst.ready || v.Owner != r.Source || !v.Bound {
		return
	}
	m.snaps++
	name := fmt.Sprint("snap-", m.snaps)
	v.snaps[name] = v.data
	start := m.now.Add(-time.Second)
	r.SourceLastSyncStart, r.SourceLastSync, r.DestinationLastSync = start, m.now, m.now
	r.LastManualSync, r.Quiesced = w.ManualTrigger, v.stopped
	r.Image = &storagev1alpha1.Replica{Target: r.Destination, Snapshot: name, Time: metav1.NewTime(start)}
	r.ImageReady, r.ImageKept = m.rng.IntN(2) == 0, w.KeepImages
	m.logf("%s synced to %s: %s holds %d writes", v.Key(), r.Destination, name, v.data)
}

// restore binds a volume asked to restore on the target its replica is on, from that replica.
// A restore must hold every write the workload made, but for a failover's restore of a volume
// of the Location it leaves: a relocate loses none, and a volume already in the Location
// switched to keeps what it has there.
func (m *model) restore(v *modelVolume) {
	if v.Restore == nil || *v.Restore == "" || v.Bound {
		return
	}
	key, snap, _ := strings.Cut(*v.Restore, "/")
	if !m.targets[key].ready || locationOf(key) != m.active {
		return
	}
	if a := m.action; a != nil && v.snaps[snap] != v.data && (a.Mode == schedulingv1alpha1.Relocate || locationOf(v.Owner) != a.From) {
		m.fail("the %s restores %s on %s from %s, which holds %d of its %d writes", a.Mode, v.Key(), v.Owner, snap, v.snaps[snap], v.data)
	}
	v.Owner, v.Bound, v.data = key, true, v.snaps[snap]
	m.logf("%s restored on %s from %s", v.Key(), key, snap)
}

// toggle takes a target down, or brings it back.
func (m *model) toggle(k string) {
	t := m.targets[k]
	if t.ready {
		t.ready, t.downSince = false, m.now
	} else {
		t.ready, t.upSince = true, m.now
	}
	m.logf("%s ready=%t", k, t.ready)
}

// event runs one random event of the world.
func (m *model) event() {
	v := m.volumes[m.rng.IntN(len(m.volumes))]
	keys := slices.Concat(modelLocations["east"], modelLocations["west"])
	k := keys[m.rng.IntN(len(keys))]
	switch n := m.rng.IntN(100); {
	case n < 30:
		m.decide(m.rng.IntN(5) == 0)
	case n < 40:
		m.sync(v)
	case n < 45:
		if r := v.Replication; r != nil && r.Image != nil {
			r.ImageReady = true
		}
	case n < 55:
		if m.writable(v) {
			v.data++
		}
	case n < 60:
		m.stop()
	case n < 65:
		m.restore(v)
	case n < 70:
		m.toggle(k)
	case n < 75:
		if t := m.targets[k]; t.fence == fencing.Fencing {
			t.fence = fencing.Fenced
		}
	case n < 80:
		if t := m.targets[k]; t.ready {
			t.reported = m.now
		}
	case n < 83:
		m.pair.Declared, m.pair.Generation = []string{"east", "west"}[m.rng.IntN(2)], m.pair.Generation+1
		m.pair.Mode = []schedulingv1alpha1.SwitchMode{schedulingv1alpha1.Relocate, schedulingv1alpha1.Failover}[m.rng.IntN(2)]
		m.logf("spec: activeLocation %s, %s (generation %d)", m.pair.Declared, m.pair.Mode, m.pair.Generation)
	default:
		m.now = m.now.Add(time.Duration(1+m.rng.IntN(90)) * time.Second)
	}
}

// stop quiesces the workloads, or starts them again, as the controller last asked; each
// source reports it.
func (m *model) stop() {
	for _, v := range m.volumes {
		v.stopped = m.quiesce
		if r := v.Replication; r != nil {
			r.Quiesced = v.stopped
		}
	}
}

// settle brings every target back, and runs the controller and the world until nothing
// changes, as the world does once events stop.
func (m *model) settle() {
	for k, t := range m.targets {
		if !t.ready {
			m.toggle(k)
		}
	}
	for range 100 {
		m.now = m.now.Add(10 * time.Second)
		m.decide(false)
		m.stop()
		for _, t := range m.targets {
			t.reported = m.now
			if t.fence == fencing.Fencing {
				t.fence = fencing.Fenced
			}
		}
		for _, v := range m.volumes {
			m.sync(v)
			if r := v.Replication; r != nil && r.Image != nil {
				r.ImageReady = true
			}
			m.restore(v)
		}
	}
}

// checkSettled: no action under way, the pair protects, and every claim with a replica in
// the active Location is bound there. A claim with none there stays where it was, told so: a
// switch completes without it, and a crash after the decision that completed the switch
// leaves it to the next decision to tell.
func (m *model) checkSettled() {
	if a := m.action; a != nil && !a.Over() {
		m.fail("settled with %s under way", describe(a))
	}
	if m.phase != schedulingv1alpha1.PairProtecting {
		m.fail("settled %s, want Protecting", m.phase)
	}
	for _, v := range m.volumes {
		if v.Replica != nil && locationOf(v.Replica.Target) == m.active && (!v.Bound || locationOf(v.Owner) != m.active) {
			m.fail("%s settled on %s (bound %t), active %s", v.Key(), v.Owner, v.Bound, m.active)
		}
		if locationOf(v.Owner) != m.active && (v.Restore == nil || *v.Restore != "") {
			m.fail("%s settled on %s, away from active %s, and is not told it has no replica there", v.Key(), v.Owner, m.active)
		}
	}
}

func TestProgressionsUnderRandomEventOrders(t *testing.T) {
	for seed := range uint64(2000) {
		m := newModel(t, seed)
		for range 200 {
			m.event()
		}
		m.settle()
		m.checkSettled()
	}
}
