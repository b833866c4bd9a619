package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Conditions as a target's syncer and the health controller report them.
var (
	heartbeating = metav1.Condition{Type: workloadv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: workloadv1alpha1.ReasonHeartbeating}
	unreachable  = metav1.Condition{Type: workloadv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: workloadv1alpha1.ReasonUnreachable}
)

func clean(domain string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: workloadv1alpha1.CleanCondition(domain), Status: status, Reason: "Reported"}
}

// held is the status of a Fence the storage confirmed since d ago.
func held(d time.Duration, reason string) storagev1alpha1.FenceStatus {
	return storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFenced, Reason: reason, RequestedTime: ago(d + time.Hour), FencedTime: ago(d)}
}

var _ = Describe("fences", func() {
	It("lists each Fence by target and domain with its mode, state, phase, executor, age and reason", func(ctx context.Context) {
		// The hub lists them by name, which puts m-xxxxx-a.east before m-xxxxx.east.
		m := id("m")
		mA := m + "-a"
		fence(ctx, mA, "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FenceFenced, Reason: "PoweredOff", Message: "an admin stated that " + mA + " is powered off",
			RequestedTime: ago(50 * time.Hour), FencedTime: ago(50 * time.Hour),
		})
		fence(ctx, m, "west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FencePending, Reason: "NoExecutor", Message: "no Ready target of storage domain west can execute the NetworkFence",
			RequestedTime: ago(26 * time.Hour),
		})
		fence(ctx, m, "east", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FenceFenced, Executor: "m2", Reason: "Fenced", Message: m + " is fenced off east by a NetworkFence in m2",
			RequestedTime: ago(10 * 24 * time.Hour), FencedTime: ago(9 * 24 * time.Hour),
		})

		header := []string{"TARGET", "DOMAIN", "MODE", "STATE", "PHASE", "EXECUTOR", "SINCE", "REASON"}
		rows := [][]string{
			{m, "east", "Network", "Fenced", "Fenced", "m2", "9d", "Fenced"},
			{m, "west", "Network", "Fenced", "Pending", "<none>", "26h", "NoExecutor"},
			{mA, "east", "Manual", "Fenced", "Fenced", "<none>", "2d2h", "PoweredOff"},
		}
		Expect(table(succeeds(custody(ctx, "fences")))).To(Equal(append([][]string{header}, rows...)))

		By("adding the message with -o wide")
		wideRows := [][]string{append(header, "MESSAGE")}
		for i, message := range []string{
			m + " is fenced off east by a NetworkFence in m2",
			"no Ready target of storage domain west can execute the NetworkFence",
			"an admin stated that " + mA + " is powered off",
		} {
			wideRows = append(wideRows, append(rows[i], message))
		}
		Expect(table(succeeds(custody(ctx, "fences", "-o", "wide")))).To(Equal(wideRows))

		By("printing the names in the same order with -o name")
		Expect(succeeds(custody(ctx, "fences", "-o", "name"))).To(Equal(fmt.Sprintf(
			"fence.storage.custody.dev/%s.east\nfence.storage.custody.dev/%s.west\nfence.storage.custody.dev/%s.east\n", m, m, mA)))
	})

	It("says there are none on a hub without Fences", func(ctx context.Context) {
		r := custody(ctx, "fences")
		Expect(r.code).To(Equal(0))
		Expect(r.out).To(BeEmpty())
		Expect(r.errOut).To(Equal("No resources found\n"))
	})
})

var _ = Describe("describe fence", func() {
	It("prints the Fence's spec and status, the NetworkFence report, its conditions and its own events", func(ctx context.Context) {
		m := id("m")
		requested, fenced := ago(50*time.Hour), ago(26*time.Hour)
		message := m + " is fenced off east by a NetworkFence in m2"
		f := fence(ctx, m, "east", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FenceFenced, Executor: "m2", Reason: "Fenced", Message: message,
			NetworkFence: &storagev1alpha1.NetworkFenceStatus{
				ClassName: "rbd", CIDRs: []string{"10.0.1.0/24", "10.0.2.0/24"}, ReportedBy: "m2",
				FenceState: storagev1alpha1.Fenced, Result: "Succeeded", Message: "fencing operation successful",
			},
			RequestedTime: requested, FencedTime: fenced,
			Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Fenced", Message: message, LastTransitionTime: *fenced}},
		})
		// As the fencing controller's recorder writes them: in namespace default, about the
		// Fence. The last is about a former Fence of the same name.
		event(ctx, f.Name, f.UID, corev1.EventTypeNormal, "Executing", "Fencing: m2 executes a NetworkFence (Fenced) for "+m, 50*time.Hour)
		event(ctx, f.Name, f.UID, corev1.EventTypeNormal, "Fenced", "Fenced: "+message, 26*time.Hour)
		event(ctx, f.Name, "0c3a9e0e-0000-4000-8000-000000000000", corev1.EventTypeWarning, "NetworkFenceFailed", "Failed: not this Fence", 40*time.Hour)

		out := succeeds(custody(ctx, "describe", "fence", f.Name))
		fields, rest, found := strings.Cut(out, "Conditions:\n")
		Expect(found).To(BeTrue(), out)
		conditions, events, found := strings.Cut(rest, "Events:\n")
		Expect(found).To(BeTrue(), out)
		Expect(strings.Split(fields, "\n")).To(Equal([]string{
			"Name:       " + f.Name,
			"Target:     " + m,
			"Domain:     east",
			"Mode:       Network",
			"State:      Fenced",
			"Held By:    <none>",
			"Phase:      Fenced",
			"Executor:   m2",
			"Reason:     Fenced",
			"Message:    " + message,
			"Requested:  " + requested.UTC().Format(time.RFC3339) + " (2d2h ago)",
			"Fenced:     " + fenced.UTC().Format(time.RFC3339) + " (26h ago)",
			"Unfencing:  <none>",
			"Unfenced:   <none>",
			"Network Fence:",
			"  Class:        rbd",
			"  CIDRs:        10.0.1.0/24,10.0.2.0/24",
			"  Reported By:  m2",
			"  Fence State:  Fenced",
			"  Result:       Succeeded",
			"  Message:      fencing operation successful",
			"",
		}))
		Expect(table(conditions)).To(Equal([][]string{
			{"Type", "Status", "Reason", "Message"},
			{"----", "------", "------", "-------"},
			{"Ready", "True", "Fenced", message},
		}))
		Expect(table(events)).To(Equal([][]string{
			{"Type", "Reason", "Age", "From", "Message"},
			{"----", "------", "---", "----", "-------"},
			{"Normal", "Executing", "2d2h", "custody-fencing", "Fencing: m2 executes a NetworkFence (Fenced) for " + m},
			{"Normal", "Fenced", "26h", "custody-fencing", "Fenced: " + message},
		}))
	})

	It("says so of a Fence the fencing controller has not seen yet", func(ctx context.Context) {
		f := fence(ctx, id("m"), "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{})
		out := succeeds(custody(ctx, "describe", "fences", f.Name))
		Expect(out).To(ContainSubstring("\nPhase:          <none>\n"))
		Expect(out).To(HaveSuffix("Network Fence:  <none>\nConditions:     <none>\nEvents:         <none>\n"))
	})
})

// event records an events.k8s.io event about Fence name with uid, at d ago, and deletes it
// after the test.
func event(ctx context.Context, name string, uid types.UID, typ, reason, note string, d time.Duration) {
	GinkgoHelper()
	e := &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: id(name)},
		EventTime:           metav1.NewMicroTime(ago(d).Time),
		ReportingController: "custody-fencing",
		ReportingInstance:   "custody-fencing-hub",
		Action:              "Fence",
		Reason:              reason,
		Regarding:           corev1.ObjectReference{APIVersion: storagev1alpha1.GroupVersion.String(), Kind: "Fence", Name: name, UID: uid},
		Note:                note,
		Type:                typ,
	}
	Expect(hub.Create(ctx, e)).To(Succeed())
	DeferCleanup(func(ctx context.Context) { Expect(hub.Delete(ctx, e)).To(Succeed()) })
}

var _ = Describe("fence --powered-off", func() {
	It("is refused for a Ready target, whose syncer still heartbeats, and writes nothing", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}}, "km", metav1.ConditionTrue, ago(time.Hour))
		failsWith(custody(ctx, "fence", m, "--powered-off"), fmt.Sprintf("synctarget %q is Ready: its syncer still heartbeats, so its member is not powered off", m))
		Expect(getFence(ctx, storagev1alpha1.FenceName(m, "east"))).To(BeNil())
	})

	It("is refused for a target without storage domains", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{}, "km", metav1.ConditionFalse, ago(time.Hour))
		failsWith(custody(ctx, "fence", m, "--powered-off"), fmt.Sprintf("synctarget %q has no storage domains: there is no storage to cut it off", m))
	})

	It("creates a Manual Fence in each domain of a lost target that has none, and leaves the others", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west", "north"}}, "km", metav1.ConditionFalse, ago(time.Hour))
		east := storagev1alpha1.FenceName(m, "east")
		deleteFenceAfter(east)
		fence(ctx, m, "west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFailed, Reason: "NoNetworkFencing"})
		fence(ctx, m, "north", storagev1alpha1.Network, storagev1alpha1.Fenced, held(time.Hour, "Fenced"))

		Expect(succeeds(custody(ctx, "fence", m, "--powered-off", "--yes"))).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east created: %[1]s is cut off storage domain east as powered off\n"+
			"fence/%[1]s.west left as it is: it is a Network Fence (phase Failed, NoNetworkFencing) and its mode cannot change; kubectl delete fence %[1]s.west lifts it first\n"+
			"fence/%[1]s.north left as it is: a Network Fence holds %[1]s off north (phase Fenced, Fenced)\n", m)))
		f := getFence(ctx, east)
		Expect(f).NotTo(BeNil())
		Expect(f.Spec).To(Equal(storagev1alpha1.FenceSpec{TargetName: m, Domain: "east", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Manual}))
		Expect(getFence(ctx, storagev1alpha1.FenceName(m, "west")).Spec.Mode).To(Equal(storagev1alpha1.Network))

		By("failing when there is nothing left to create and a Network Fence is in the way")
		r := custody(ctx, "fence", m, "--powered-off", "--yes")
		Expect(r.out).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east unchanged: it already states that %[1]s is powered off (phase <none>)\n"+
			"fence/%[1]s.west left as it is: it is a Network Fence (phase Failed, NoNetworkFencing) and its mode cannot change; kubectl delete fence %[1]s.west lifts it first\n"+
			"fence/%[1]s.north left as it is: a Network Fence holds %[1]s off north (phase Fenced, Fenced)\n", m)))
		Expect(r.errOut).To(Equal(fmt.Sprintf("error: no Fence of %s was created\n", m)))
		Expect(r.code).To(Equal(1))
		Expect(getFence(ctx, east).ResourceVersion).To(Equal(f.ResourceVersion))
	})

	It("creates the Fences of a target never heard from", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}}, "", "", nil)
		deleteFenceAfter(storagev1alpha1.FenceName(m, "east"))
		Expect(succeeds(custody(ctx, "fence", m, "--powered-off", "--yes"))).To(Equal(fmt.Sprintf("fence/%[1]s.east created: %[1]s is cut off storage domain east as powered off\n", m)))
		Expect(table(succeeds(custody(ctx, "fences")))).To(Equal([][]string{
			{"TARGET", "DOMAIN", "MODE", "STATE", "PHASE", "EXECUTOR", "SINCE", "REASON"},
			{m, "east", "Manual", "Fenced", "<none>", "<none>", "<unknown>", "<none>"},
		}))
	})
})

var _ = Describe("unfence", func() {
	It("lifts a Fence that holds only once its target is Ready and clean in its domain, and one that does not hold at once", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}}, "km", metav1.ConditionFalse, ago(time.Hour))
		east := fence(ctx, m, "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, held(time.Hour, "PoweredOff"))
		west := fence(ctx, m, "west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FencePending, Reason: "NoExecutor"})
		state := func(f *storagev1alpha1.Fence) storagev1alpha1.FenceState { return getFence(ctx, f.Name).Spec.State }
		stays := ": it stays fenced until its syncer is back and reports that it holds nothing it should not"

		By("refusing the held Fence while the target is lost, lifting the pending one")
		Expect(succeeds(custody(ctx, "unfence", m, "--yes"))).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east not unfenced: %[1]s is not Ready%[2]s\n"+
			"fence/%[1]s.west unfenced: the hub lifts it\n", m, stays)))
		Expect(state(east)).To(Equal(storagev1alpha1.Fenced))
		Expect(state(west)).To(Equal(storagev1alpha1.Unfenced))

		By("failing when nothing is left that may be lifted, without asking")
		r := custody(ctx, "unfence", m)
		Expect(r.out).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east not unfenced: %[1]s is not Ready%[2]s\n"+
			"fence/%[1]s.west already unfenced (phase Pending, NoExecutor)\n", m, stays)))
		Expect(r.errOut).To(Equal(fmt.Sprintf("error: no Fence of %s was unfenced\n", m)))
		Expect(r.code).To(Equal(1))

		By("refusing while the target is Ready but has not reported clean in the domain")
		report(ctx, m, heartbeating, clean("east", metav1.ConditionFalse), clean("west", metav1.ConditionTrue))
		r = custody(ctx, "unfence", m, "--yes")
		Expect(r.out).To(HavePrefix(fmt.Sprintf("fence/%[1]s.east not unfenced: %[1]s has not reported clean in east%[2]s\n", m, stays)))
		Expect(r.code).To(Equal(1))
		Expect(state(east)).To(Equal(storagev1alpha1.Fenced))

		By("refusing again once the target is clean but lost")
		report(ctx, m, unreachable, clean("east", metav1.ConditionTrue))
		Expect(custody(ctx, "unfence", m, "--yes").code).To(Equal(1))
		Expect(state(east)).To(Equal(storagev1alpha1.Fenced))

		By("lifting it once the target is Ready and clean in the domain")
		report(ctx, m, heartbeating)
		Expect(succeeds(custody(ctx, "unfence", m, "--yes"))).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east unfenced: the hub lifts it\n"+
			"fence/%[1]s.west already unfenced (phase Pending, NoExecutor)\n", m)))
		Expect(state(east)).To(Equal(storagev1alpha1.Unfenced))
		Expect(getFence(ctx, east.Name).Spec.Mode).To(Equal(storagev1alpha1.Manual))
	})

	It("lifts the Fences of a deleted target", func(ctx context.Context) {
		m := id("m")
		f := fence(ctx, m, "east", storagev1alpha1.Network, storagev1alpha1.Fenced, held(time.Hour, "Fenced"))
		Expect(succeeds(custody(ctx, "unfence", m, "--yes"))).To(Equal(fmt.Sprintf("fence/%s.east unfenced: the hub lifts it\n", m)))
		Expect(getFence(ctx, f.Name).Spec.State).To(Equal(storagev1alpha1.Unfenced))
	})

	It("says so of a target without Fences", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east"}}, "km", metav1.ConditionTrue, ago(time.Hour))
		Expect(succeeds(custody(ctx, "unfence", m))).To(Equal(fmt.Sprintf("synctarget/%s has no Fence: nothing to unfence\n", m)))
	})
})

var _ = Describe("fence --powered-off and unfence ask", func() {
	// fenceQuestion is what fence --powered-off asks of m in the domains named.
	fenceQuestion := func(m, domains string) string {
		return fmt.Sprintf("State that the member of %s is powered off, and cut it off %s? Its volumes there then move to other targets "+
			"without its acknowledgement: say so only of a member that is off. [y/N] ", m, domains)
	}

	It("fence creates nothing unless the answer is yes, and then what it named", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}}, "km", metav1.ConditionFalse, ago(time.Hour))
		east, west := storagev1alpha1.FenceName(m, "east"), storagev1alpha1.FenceName(m, "west")
		deleteFenceAfter(east)
		deleteFenceAfter(west)
		for _, answer := range []string{"", "n\n", "no\n", "sure\n"} {
			r := answering(ctx, answer, "fence", m, "--powered-off")
			Expect(r.out).To(Equal(fenceQuestion(m, "storage domains east, west")), "answer %q", answer)
			Expect(r.errOut).To(Equal(fmt.Sprintf("error: not confirmed: no Fence of %s was created\n", m)))
			Expect(r.code).To(Equal(1))
			Expect(getFence(ctx, east)).To(BeNil())
			Expect(getFence(ctx, west)).To(BeNil())
		}

		By("creating both on yes")
		Expect(succeeds(answering(ctx, "y\n", "fence", m, "--powered-off"))).To(Equal(fenceQuestion(m, "storage domains east, west") + fmt.Sprintf(""+
			"fence/%[1]s.east created: %[1]s is cut off storage domain east as powered off\n"+
			"fence/%[1]s.west created: %[1]s is cut off storage domain west as powered off\n", m)))
		Expect(getFence(ctx, east).Spec.Mode).To(Equal(storagev1alpha1.Manual))
		Expect(getFence(ctx, west).Spec.Mode).To(Equal(storagev1alpha1.Manual))
	})

	It("fence --dry-run prints the Fences it would create, asks nothing and creates none", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "north"}}, "km", metav1.ConditionFalse, ago(time.Hour))
		fence(ctx, m, "north", storagev1alpha1.Network, storagev1alpha1.Fenced, held(time.Hour, "Fenced"))
		east := storagev1alpha1.FenceName(m, "east")
		deleteFenceAfter(east)
		Expect(succeeds(custody(ctx, "fence", m, "--powered-off", "--dry-run"))).To(Equal(fmt.Sprintf(""+
			"fence/%[1]s.east created: %[1]s is cut off storage domain east as powered off (server dry run)\n"+
			"fence/%[1]s.north left as it is: a Network Fence holds %[1]s off north (phase Fenced, Fenced)\n", m)))
		Expect(getFence(ctx, east)).To(BeNil())

		By("still refusing what the command refuses")
		report(ctx, m, heartbeating)
		failsWith(custody(ctx, "fence", m, "--powered-off", "--dry-run"), fmt.Sprintf("synctarget %q is Ready: its syncer still heartbeats, so its member is not powered off", m))
	})

	It("unfence lifts nothing unless the answer is yes; --dry-run prints what it would lift", func(ctx context.Context) {
		m := id("m")
		target(ctx, m, nil, workloadv1alpha1.SyncTargetSpec{StorageDomains: []string{"east", "west"}}, "km", metav1.ConditionFalse, ago(time.Hour))
		east := fence(ctx, m, "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, held(time.Hour, "PoweredOff"))
		west := fence(ctx, m, "west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FencePending, Reason: "NoExecutor"})
		question := fmt.Sprintf("Unfence %s in storage domain west? Once the hub lifts those Fences, its member can reach that storage again. [y/N] ", m)
		lines := fmt.Sprintf(""+
			"fence/%[1]s.east not unfenced: %[1]s is not Ready: it stays fenced until its syncer is back and reports that it holds nothing it should not\n"+
			"fence/%[1]s.west unfenced: the hub lifts it", m)
		unchanged := func() {
			GinkgoHelper()
			Expect(getFence(ctx, east.Name).Spec.State).To(Equal(storagev1alpha1.Fenced))
			Expect(getFence(ctx, west.Name).ResourceVersion).To(Equal(west.ResourceVersion))
		}

		r := answering(ctx, "n\n", "unfence", m)
		Expect(r.out).To(Equal(question))
		Expect(r.errOut).To(Equal(fmt.Sprintf("error: not confirmed: no Fence of %s was unfenced\n", m)))
		Expect(r.code).To(Equal(1))
		unchanged()

		By("printing the lift as a server dry run with --dry-run")
		Expect(succeeds(custody(ctx, "unfence", m, "--dry-run"))).To(Equal(lines + " (server dry run)\n"))
		unchanged()

		By("lifting the Fence it named on yes")
		Expect(succeeds(answering(ctx, "yes\n", "unfence", m))).To(Equal(question + lines + "\n"))
		Expect(getFence(ctx, west.Name).Spec.State).To(Equal(storagev1alpha1.Unfenced))
		Expect(getFence(ctx, east.Name).Spec.State).To(Equal(storagev1alpha1.Fenced))
	})
})
