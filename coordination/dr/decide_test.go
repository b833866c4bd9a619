package dr

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/fencing"
)

var now = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func replica(target string, age time.Duration) *storagev1alpha1.Replica {
	return &storagev1alpha1.Replica{Target: target, Snapshot: "snap-" + target, Time: metav1.NewTime(ago(age))}
}

// pair observes the pair east (primary: e1, e2) and west (secondary: w1, w2), every target
// Ready, with one volume ns/c bound on e1 and no replication yet.
func pair() Observation {
	loc := func(name string, keys ...string) Location {
		l := Location{Name: name, Found: true}
		for _, k := range keys {
			l.Targets = append(l.Targets, Target{Key: k, Ready: true, Clean: true, Classes: []string{"fast", "slow"}, DefaultClass: "fast"})
		}
		return l
	}
	return Observation{
		Now: now,
		Pair: Pair{Primary: "east", Secondary: "west", Generation: 1, Mode: schedulingv1alpha1.Relocate, Automatic: true,
			Threshold: time.Minute, Interval: 5 * time.Minute, Schedule: "*/5 * * * *"},
		Locations: map[string]Location{"east": loc("east", "e1", "e2"), "west": loc("west", "w1", "w2")},
		Volumes:   []Volume{{Namespace: "ns", Claim: "c", Owner: "e1", Bound: true}},
	}
}

// dest is where ns's replicas go in west, and otherDest the other target there.
var (
	dest      = Destination("ns", []string{"w1", "w2"})
	otherDest = otherThan(dest, "w1", "w2")
)

// otherThan is the one of two keys that is not key.
func otherThan(key, a, b string) string {
	if key == a {
		return b
	}
	return a
}

// failedOver is the pair after a failover from east, whose targets are fenced and have not
// reported since, to west, completed five minutes ago: the volume, bound on dest, does not
// replicate yet.
func failedOver() Observation {
	o := with(replicating(pair(), time.Minute), "east", fenceState(fencing.Fenced))
	o.Active, o.Action = "west", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionCompleted, 10*time.Minute)
	done := metav1.NewTime(ago(5 * time.Minute))
	o.Action.CompletionTime = &done
	o.Volumes[0].Owner, o.Volumes[0].Replication = dest, nil
	return o
}

// replicating gives the volume a replication from e1 to dest whose last sync made a ready
// image age old, recorded on the claim.
func replicating(o Observation, age time.Duration) Observation {
	img := replica(dest, age)
	o.Volumes[0].Replication = &Replication{Source: "e1", Destination: dest, SourceLastSyncStart: img.Time.Time,
		SourceLastSync: img.Time.Add(time.Second), DestinationLastSync: img.Time.Add(time.Second), Image: img, ImageReady: true, ImageKept: true}
	o.Volumes[0].Replica = img
	return o
}

// replicatingBack is a pair after a switch of mode to west, begun started ago and completed
// done ago: the volume, restored on dest from the replica recorded recorded ago, replicates back
// to east, whose last sync made a ready image image ago.
func replicatingBack(mode schedulingv1alpha1.SwitchMode, started, done, recorded, image time.Duration) Observation {
	o := pair()
	o.Active, o.Action = "west", action(mode, schedulingv1alpha1.ProgressionCompleted, started)
	completed := metav1.NewTime(ago(done))
	o.Action.CompletionTime = &completed
	back := Destination("ns", []string{"e1", "e2"})
	o.Volumes[0].Owner, o.Volumes[0].Replica = dest, replica(dest, recorded)
	o.Volumes[0].Replication = &Replication{Source: dest, Destination: back, Image: replica(back, image), ImageReady: true}
	return o
}

// with changes the targets of loc that keys name.
func with(o Observation, loc string, change func(*Target), keys ...string) Observation {
	l := o.Locations[loc]
	l.Targets = slices.Clone(l.Targets)
	for i := range l.Targets {
		if len(keys) == 0 || slices.Contains(keys, l.Targets[i].Key) {
			change(&l.Targets[i])
		}
	}
	o.Locations[loc] = l
	return o
}

func lost(since time.Duration) func(*Target) {
	return func(t *Target) { t.Ready, t.UnreachableSince = false, ago(since) }
}

func readySince(since time.Duration) func(*Target) {
	return func(t *Target) { t.Ready, t.UnreachableSince, t.ReadySince = true, time.Time{}, ago(since) }
}

func fenceState(s fencing.State) func(*Target) { return func(t *Target) { t.Fence = s } }

func action(mode schedulingv1alpha1.SwitchMode, progression string, started time.Duration) *schedulingv1alpha1.PairAction {
	return &schedulingv1alpha1.PairAction{Mode: mode, From: "east", To: "west", Generation: 1, Progression: progression,
		StartTime: metav1.NewTime(ago(started))}
}

// message is the message of the decision's condition of type t.
func message(d Decision, t string) string {
	return meta.FindStatusCondition(d.Conditions, t).Message
}

func condition(d Decision, t string) string {
	c := meta.FindStatusCondition(d.Conditions, t)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason
}

// calledOff is the pair after an automatic failover from east that was called off, east
// answering again before it was fenced: east is active, and its volume replicates to west.
func calledOff() Observation {
	o := replicating(pair(), time.Minute)
	o.Active, o.Action = "east", action(schedulingv1alpha1.Failover, schedulingv1alpha1.ProgressionCalledOff, time.Minute)
	at := metav1.NewTime(ago(50 * time.Second))
	o.Action.Automatic, o.Action.ProgressionTime = true, &at
	return o
}

// protectedBack is the pair protected again after a failover to west: the volume's recorded
// replica is the replication back's.
func protectedBack() Observation {
	o := replicatingBack(schedulingv1alpha1.Failover, 10*time.Minute, 5*time.Minute, 6*time.Minute, time.Minute)
	o.Volumes[0].Replica = o.Volumes[0].Replication.Image
	return o
}

// switchAfter is the case of a pair whose last action is over, then asked to switch to the
// other Location in mode: the switch starts at its first step, from the active Location, and
// stops the workloads there; a failover fences that Location.
func switchAfter(what string, over func() Observation, mode schedulingv1alpha1.SwitchMode, first string) decideCase {
	return decideCase{
		name: fmt.Sprintf("%s, a declared %s starts at %s", what, strings.ToLower(string(mode)), first),
		o: func() Observation {
			o := over()
			o.Pair.Declared, o.Pair.Mode, o.Pair.Generation = o.peer(o.Active), mode, o.Action.Generation+1
			return o
		},
		check: func(t *testing.T, d Decision) {
			expect(t, d.Action.Mode, mode)
			expect(t, d.Action.From, d.Active)
			expect(t, d.Action.Progression, first)
			expect(t, d.Quiesce, true)
			expect(t, len(d.Fence) > 0, mode == schedulingv1alpha1.Failover)
		},
	}
}

// decideCase is one decision of a table test: the pair observed, and what the decision must
// say of it.
type decideCase struct {
	name  string
	o     func() Observation
	check func(t *testing.T, d Decision)
}

// allCases are the table tests of every seam.
func allCases() []decideCase {
	return slices.Concat(protectionCases(), failoverCases(), relocateCases(), returnCases())
}

// runCases decides each case, checks that the change of progression it makes is allowed,
// and then what the case wants.
func runCases(t *testing.T, cases []decideCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := c.o()
			d := Decide(o)
			if from, to := progression(o.Action), progression(d.Action); !Allowed(from, to) {
				t.Errorf("%q → %q is not an allowed change of progression", from, to)
			}
			c.check(t, d)
		})
	}
}

// progression is the pair's progression with its last action: empty with none.
func progression(a *schedulingv1alpha1.PairAction) string {
	if a == nil {
		return ""
	}
	return a.Progression
}

// TestEveryTransitionIsCovered checks that the table tests take every transition the
// Transitions table allows, each in a decision that takes that one alone, so that the table
// and the tests move together.
func TestEveryTransitionIsCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range allCases() {
		o := c.o()
		seen[fmt.Sprint(progression(o.Action), "→", progression(Decide(o).Action))] = true
	}
	for _, tr := range Transitions {
		if !seen[fmt.Sprint(tr.From, "→", tr.To)] {
			t.Errorf("no table test covers %q → %q (%s)", tr.From, tr.To, tr.Name)
		}
	}
}

// TestAllowed: a decision may take several transitions at once, and none that the table
// does not chain.
func TestAllowed(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		want     bool
	}{
		{"", "", true},
		{"", schedulingv1alpha1.ProgressionRestoring, true},
		{"", schedulingv1alpha1.ProgressionCompleted, true},
		{schedulingv1alpha1.ProgressionQuiescing, schedulingv1alpha1.ProgressionCompleted, true},
		{schedulingv1alpha1.ProgressionFinalSync, schedulingv1alpha1.ProgressionCalledOff, true},
		{schedulingv1alpha1.ProgressionRestoring, schedulingv1alpha1.ProgressionFencing, false},
		{schedulingv1alpha1.ProgressionFencing, schedulingv1alpha1.ProgressionQuiescing, false},
		{schedulingv1alpha1.ProgressionCompleted, "", false},
		{schedulingv1alpha1.ProgressionCalledOff, schedulingv1alpha1.ProgressionCompleted, true},
	} {
		if got := Allowed(tc.from, tc.to); got != tc.want {
			t.Errorf("Allowed(%q, %q) = %t, want %t", tc.from, tc.to, got, tc.want)
		}
	}
}

// volumeCondition is the Replicated condition the decision gives the volume, as
// "<status>/<reason>: <message>".
func volumeCondition(d Decision, k string) string {
	c, ok := d.VolumeConditions[k]
	if !ok {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

func expect[T any](t *testing.T, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestDecideRechecksWhenTheActiveLocationWouldBeLostOrAReplicaLag(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Observation
		want time.Duration
	}{
		{"every target Unreachable, the last for 20s of the 1m threshold", with(with(pair(), "east", lost(50*time.Second), "e1"), "east", lost(20*time.Second), "e2"), 40 * time.Second},
		{"one target still answers", with(pair(), "east", lost(50*time.Second), "e1"), 0},
		{"every target Unreachable for 2m, but west answers again only since 10s: the threshold counts from then", with(with(pair(), "east", lost(2*time.Minute)), "west", readySince(10*time.Second)), 50 * time.Second},
		{"west answers nowhere", with(with(pair(), "east", lost(50*time.Second)), "west", lost(time.Second)), 0},
		{"every target answers", pair(), 0},
		{"lost already: the failover starts now; the replica turns two 5m intervals old in 9m", with(replicating(pair(), time.Minute), "east", lost(2*time.Minute)), 9 * time.Minute},
		{"a replica 1m old turns two 5m intervals old first", replicating(pair(), time.Minute), 9 * time.Minute},
		{"the Location is lost before the replica lags", with(replicating(pair(), time.Minute), "east", lost(50*time.Second)), 10 * time.Second},
		{"a lagging replica already shows", replicating(pair(), 11*time.Minute), 0},
		{"automatic failover off", func() Observation {
			o := with(pair(), "east", lost(20*time.Second))
			o.Pair.Automatic = false
			return o
		}(), 0},
	} {
		if got := Decide(tc.o).Recheck; got != tc.want {
			t.Errorf("%s: recheck in %s, want %s", tc.name, got, tc.want)
		}
	}
}
