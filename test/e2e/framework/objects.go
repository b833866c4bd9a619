package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// AppLabel labels a spec's namespace with its own name, for its Placements to select it
// and no other spec's.
const AppLabel = "app"

// App creates a namespace of its own, placed in each of the Locations, and returns its name.
func App(ctx context.Context, hub client.Client, locations ...string) string {
	GinkgoHelper()
	name := "app-" + rand.String(5)
	Expect(hub.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{AppLabel: name}}})).To(Succeed())
	for _, loc := range locations {
		Expect(hub.Create(ctx, Placement(name, loc))).To(Succeed())
	}
	return name
}

// Placement places the namespaces labelled AppLabel=<app> in the Location loc.
func Placement(app, loc string) *schedulingv1alpha1.Placement {
	return &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: app + "-" + loc},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationName:      loc,
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{AppLabel: app}},
		},
	}
}

// Location creates a Location with the labels over the SyncTargets that match selector.
func Location(ctx context.Context, hub client.Client, name string, labels, selector map[string]string) *schedulingv1alpha1.Location {
	GinkgoHelper()
	l := &schedulingv1alpha1.Location{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       schedulingv1alpha1.LocationSpec{InstanceSelector: metav1.LabelSelector{MatchLabels: selector}},
	}
	Expect(hub.Create(ctx, l)).To(Succeed())
	return l
}

// Target creates a SyncTarget with the labels and spec, as join registers a member; no syncer
// has reported on it yet.
func Target(ctx context.Context, hub client.Client, name string, labels map[string]string, spec workloadv1alpha1.SyncTargetSpec) *workloadv1alpha1.SyncTarget {
	GinkgoHelper()
	t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: spec}
	Expect(hub.Create(ctx, t)).To(Succeed())
	return t
}

// DeleteAfter deletes the objects from c, in order, when the current spec or node ends; one
// gone already, as a spec may delete it itself, is fine.
func DeleteAfter(c client.Client, objs ...client.Object) {
	DeferCleanup(func(ctx context.Context) {
		for _, o := range objs {
			Expect(client.IgnoreNotFound(c.Delete(ctx, o))).To(Succeed())
		}
	})
}
