package storageclass

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// fixture is one test's Location and targets. Its targets carry the label test=<id>, so
// tests share the hub without seeing each other; a target is in the Location while it is
// also labelled in=yes.
type fixture struct {
	id  string
	loc string
}

func newFixture() fixture {
	id := rand.String(6)
	return fixture{id: id, loc: "loc-" + id}
}

// location creates the Location.
func (f fixture) location(ctx context.Context) {
	framework.Location(ctx, hub, f.loc, nil, map[string]string{"test": f.id, "in": "yes"})
}

// target creates a SyncTarget, in the Location or not, that reports the classes.
func (f fixture) target(ctx context.Context, name string, in bool, classes ...workloadv1alpha1.StorageClassInfo) string {
	t := f.joined(ctx, name, in)
	report(ctx, t, classes...)
	return t
}

// joined creates a SyncTarget, in the Location or not, whose syncer has not reported yet.
func (f fixture) joined(ctx context.Context, name string, in bool) string {
	labels := map[string]string{"test": f.id, "in": yesNo(in)}
	return framework.Target(ctx, hub, name+"-"+f.id, labels, workloadv1alpha1.SyncTargetSpec{Priority: 1}).Name
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// updateTarget changes a SyncTarget's metadata and spec, or with status set, its status.
func updateTarget(ctx context.Context, name string, status bool, change func(*workloadv1alpha1.SyncTarget)) {
	t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if status {
		framework.PatchStatus(ctx, hub, t, change)
	} else {
		framework.Patch(ctx, hub, t, change)
	}
}

// report writes the target's classes to its status, as its syncer does.
func report(ctx context.Context, name string, classes ...workloadv1alpha1.StorageClassInfo) {
	updateTarget(ctx, name, true, func(t *workloadv1alpha1.SyncTarget) {
		t.Status.StorageClasses, t.Status.SyncedResources = classes, []string{"persistentvolumeclaims"}
	})
}

// setIn moves the target into the Location or out of it.
func setIn(ctx context.Context, name string, in bool) {
	updateTarget(ctx, name, false, func(t *workloadv1alpha1.SyncTarget) { t.Labels["in"] = yesNo(in) })
}

// class is a network StorageClass of domain "east".
func class(name, provisioner string, parameters map[string]string) workloadv1alpha1.StorageClassInfo {
	return workloadv1alpha1.StorageClassInfo{
		Name: name, Provisioner: provisioner, Parameters: parameters,
		ReclaimPolicy: corev1.PersistentVolumeReclaimDelete, VolumeBindingMode: "WaitForFirstConsumer", Domain: "east",
	}
}

// expectCondition waits until the Location's condition has the status and reason, and a
// message that contains every part.
func (f fixture) expectCondition(ctx context.Context, typ string, status metav1.ConditionStatus, reason string, parts ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		l := &schedulingv1alpha1.Location{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: f.loc}, l)).To(Succeed())
		c := meta.FindStatusCondition(l.Status.Conditions, typ)
		g.Expect(c).NotTo(BeNil(), "condition %s", typ)
		g.Expect(c.Status).To(Equal(status), c.Message)
		g.Expect(c.Reason).To(Equal(reason), c.Message)
		g.Expect(c.Message).To(containsAll(parts))
	}).WithContext(ctx).Should(Succeed())
}

// expectCompatible waits for the StorageClassesCompatible condition.
func (f fixture) expectCompatible(ctx context.Context, status metav1.ConditionStatus, reason string, parts ...string) {
	GinkgoHelper()
	f.expectCondition(ctx, schedulingv1alpha1.ConditionStorageClassesCompatible, status, reason, parts...)
}

func containsAll(parts []string) types.GomegaMatcher {
	var all []types.GomegaMatcher
	for _, p := range parts {
		all = append(all, ContainSubstring(p))
	}
	return SatisfyAll(all...)
}

// events lists the events about the fixture's Location.
func (f fixture) events(ctx context.Context, g Gomega) []eventsv1.Event {
	list := &eventsv1.EventList{}
	g.Expect(hub.List(ctx, list)).To(Succeed())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Location" && e.Regarding.Name == f.loc {
			out = append(out, e)
		}
	}
	return out
}

// expectEvent waits for an event about the Location of the type and reason, whose note
// contains every part.
func (f fixture) expectEvent(ctx context.Context, typ, reason string, parts ...string) {
	GinkgoHelper()
	Eventually(func(g Gomega) []eventsv1.Event { return f.events(ctx, g) }).WithContext(ctx).Should(ContainElement(SatisfyAll(
		HaveField("Type", typ), HaveField("Reason", reason), HaveField("Note", containsAll(parts)))))
}

// expectNoWarning checks for a while that no Warning event about the Location appears.
func (f fixture) expectNoWarning(ctx context.Context) {
	GinkgoHelper()
	Consistently(func(g Gomega) []eventsv1.Event { return f.events(ctx, g) }).WithContext(ctx).
		ShouldNot(ContainElement(HaveField("Type", corev1.EventTypeWarning)))
}
