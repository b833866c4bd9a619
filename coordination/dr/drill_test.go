package dr

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// drilling observes a drill of the pair east/west, which runs in east: ns/c replicates to
// dest with a ready image 3m old, ns/d has no replica yet, and ns/e is left out of the
// pair's protection.
func drilling() DrillObservation {
	p := replicating(pair(), 3*time.Minute)
	p.Pair.Classes = []schedulingv1alpha1.StorageClassMapping{{Primary: "fast", Secondary: "west-fast"}}
	p.Volumes[0].StorageClass, p.Volumes[0].NamedClass = ptr.To("fast"), ptr.To("fast")
	return DrillObservation{
		Now: now, Pair: p.Pair, PairFound: true, Active: "east", Namespaces: []string{"ns"},
		Volumes:     append(p.Volumes, Volume{Namespace: "ns", Claim: "d", Owner: "e1", Bound: true}),
		Unprotected: []Volume{{Namespace: "ns", Claim: "e", Owner: "e1", Bound: true}},
		Claims:      map[string]SandboxClaim{},
	}
}

// nextDrill is the observation after d, later by elapsed: the drill's status as d wrote it.
func nextDrill(o DrillObservation, d DrillDecision, elapsed time.Duration) DrillObservation {
	o.Now, o.Status = o.Now.Add(elapsed), d.Status
	return o
}

func TestDrillWaitsUntilItsPairCanBeDrilled(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*DrillObservation)
		reason string
	}{
		{"the pair is missing", func(o *DrillObservation) { o.PairFound = false }, schedulingv1alpha1.ReasonPairNotFound},
		{"an older drill of the pair runs", func(o *DrillObservation) { o.Before = "first" }, schedulingv1alpha1.ReasonDrillInProgress},
		{"the pair is switching", func(o *DrillObservation) { o.Switching = true }, schedulingv1alpha1.ReasonPairSwitching},
		{"the pair has no active Location yet", func(o *DrillObservation) { o.Active = "" }, schedulingv1alpha1.ReasonPairSwitching},
		{"a sandbox's namespace is someone else's", func(o *DrillObservation) { o.Taken = []string{"ns-drill"} }, schedulingv1alpha1.ReasonNamespaceTaken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := drilling()
			tc.change(&o)
			d := DecideDrill(o)
			expect(t, d.Status.Phase, schedulingv1alpha1.DrillPending)
			expect(t, d.Status.StartTime == nil, true)
			expect(t, d.Sandbox, false)
			expect(t, d.Status.Conditions[0].Reason, tc.reason)
		})
	}
}

func TestDrillRestoresTheLatestReplicasAtTheOtherLocationAndMeasuresItsRTO(t *testing.T) {
	o := drilling()
	d := DecideDrill(o)
	st := d.Status
	expect(t, st.Phase, schedulingv1alpha1.DrillRestoring)
	expect(t, st.Location, "west")
	expect(t, st.StartTime.Time, now)
	expect(t, st.Namespaces, []schedulingv1alpha1.DrillNamespace{{Namespace: "ns", Sandbox: "ns-drill"}})
	expect(t, d.Sandbox, true)
	// ns/c from its replica in ns at dest, in the class the pair maps fast to in west; ns/d
	// and ns/e made empty.
	expect(t, d.Restores, map[string]string{"ns/c": dest + "/ns/snap-" + dest, "ns/d": "", "ns/e": ""})
	expect(t, d.Classes, map[string]string{"ns/c": "west-fast"})
	expect(t, [3]int32{st.Volumes, st.Restored, st.Unprotected}, [3]int32{3, 0, 2})
	expect(t, st.OldestReplicaTime.Time, ago(3*time.Minute))
	expect(t, st.DataWindow.Duration, 3*time.Minute)
	expect(t, st.Conditions[0].Message, "0 of 3 volumes restored in west")

	// 20s later the claims are bound in the sandbox; its Deployment has not reported.
	o = nextDrill(o, d, 20*time.Second)
	o.Claims = map[string]SandboxClaim{"ns-drill/c": {Restored: true, Bound: true}, "ns-drill/d": {Bound: true}, "ns-drill/e": {Bound: true}}
	o.Workloads = []Workload{{Namespace: "ns-drill", Kind: "Deployment", Name: "web", Replicas: 2}}
	d = DecideDrill(o)
	expect(t, d.Status.Phase, schedulingv1alpha1.DrillStarting)
	expect(t, d.Status.Restored, int32(1))
	expect(t, d.Status.Conditions[0].Message, "1 workloads to be ready in west, the first ns-drill/Deployment/web (0 of 2 replicas ready)")
	// A newer replica does not change the window the drill measured at its start.
	o.Volumes[0].Replication.Image = replica(dest, time.Second)
	expect(t, DecideDrill(o).Status.DataWindow.Duration, 3*time.Minute)

	// 10s later the Deployment reports both replicas ready: the drill served after 30s.
	o = nextDrill(o, d, 10*time.Second)
	o.Workloads[0].Ready, o.Workloads[0].Reported = 2, o.Now
	d = DecideDrill(o)
	st = d.Status
	expect(t, st.Phase, schedulingv1alpha1.DrillReady)
	expect(t, st.RecoveryTime.Duration, 30*time.Second)
	expect(t, st.Conditions[0].Status, metav1.ConditionTrue)
	var phases []string
	for _, s := range st.Steps {
		phases = append(phases, s.Progression)
	}
	expect(t, phases, []string{"Restoring", "Starting", "Ready"})

	// Decided again later, the RTO stays what it was.
	expect(t, DecideDrill(nextDrill(o, d, time.Minute)).Status.RecoveryTime.Duration, 30*time.Second)
}

func TestDrillWhoseSandboxWasTakenAfterItStartedSaysSo(t *testing.T) {
	o := drilling()
	o = nextDrill(o, DecideDrill(o), time.Second)
	o.Taken = []string{"ns-drill"}
	d := DecideDrill(o)
	expect(t, d.Sandbox, false)
	expect(t, d.Status.Conditions[0].Reason, schedulingv1alpha1.ReasonNamespaceTaken)
}

func TestSandboxOfKeepsWithinANamespaceName(t *testing.T) {
	expect(t, SandboxOf("shop"), "shop-drill")
	long := SandboxOf(strings.Repeat("a", 56) + "-bbbbbb")
	expect(t, len(long) <= 63, true)
	expect(t, long, strings.Repeat("a", 56)+"-drill")
}

func TestPairHistoryRecordsEachDrillOnceItServedOrEnded(t *testing.T) {
	o := drilling()
	d := DecideDrill(o)
	expect(t, DrillRecord(d.Status, "east", false) == nil, true)

	ended := DrillRecord(d.Status, "east", true)
	expect(t, ended.Progression, schedulingv1alpha1.ProgressionCalledOff)
	expect(t, ended.Summary(), "Drill from east to west (Declared) ended before it was ready")

	o = nextDrill(o, d, 30*time.Second)
	o.Claims = map[string]SandboxClaim{"ns-drill/c": {Restored: true, Bound: true}, "ns-drill/d": {Bound: true}, "ns-drill/e": {Bound: true}}
	d = DecideDrill(o)
	a := DrillRecord(d.Status, "east", false)
	expect(t, a.Mode, schedulingv1alpha1.DrillMode)
	expect(t, a.Summary(), "Drill from east to west (Declared) completed in 30s, from replicas at most 3m0s old; volumes restored 1, set aside 0, waiting for want of a replica 2")

	p := replicating(pair(), time.Minute)
	p.Drills = []schedulingv1alpha1.PairAction{*a}
	pd := Decide(p)
	expect(t, len(pd.History), 1)
	expect(t, pd.History[0].Mode, schedulingv1alpha1.DrillMode)
	expect(t, pd.Action == nil, true)
	// Recorded once.
	p.History = pd.History
	expect(t, len(Decide(p).History), 1)
}
