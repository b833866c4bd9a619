package statefulset

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

// The members have nodes (testbed.Options.Nodes), played by kwok, and a kube-scheduler: what
// is placed on a member runs there, and its status says so.
var _ = Describe("A StatefulSet placed on a member", func() {
	It("runs there: each pod is scheduled on a node of the member with its claim Bound, Running and Ready, and the ready replicas show on the member and on the hub", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 0, 1)
		owner, _ := boundOn(ctx, ns, "", names)
		syncedOn(ctx, set, owner)
		member := framework.Member(env.Bed, owner)
		key := framework.CopyKey(hubID, owner, ns, set.Name)

		Eventually(func(g Gomega) {
			down := &appsv1.StatefulSet{}
			g.Expect(member.Client.Get(ctx, key, down)).To(Succeed())
			g.Expect(down.Status.ReadyReplicas).To(BeEquivalentTo(2), "status %+v", down.Status)
			g.Expect(down.Status.AvailableReplicas).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())
		claims := memberClaims(ctx, owner, ns, names)
		pods := runningPods(ctx, member, key.Namespace, 2)
		for _, p := range pods {
			claim := ""
			for _, v := range p.Spec.Volumes {
				if v.PersistentVolumeClaim != nil {
					claim = v.PersistentVolumeClaim.ClaimName
				}
			}
			Expect(claims).To(HaveKey(claim), "pod %s uses one of the set's claims", p.Name)
		}

		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(set), set)).To(Succeed())
			g.Expect(set.Status.ReadyReplicas).To(BeEquivalentTo(2), "hub status %+v", set.Status)
			g.Expect(set.Status.AvailableReplicas).To(BeEquivalentTo(2))
		}).WithContext(ctx).Should(Succeed())
	})
})

var _ = Describe("A Deployment placed on a member", func() {
	It("runs there: its pods are Running and Ready on the member's nodes, and the Deployment is available on the member and on the hub", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		labels := map[string]string{"app": "echo"}
		deploy := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "echo"},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](3),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "echo", Image: "registry.k8s.io/e2e-test-images/agnhost:2.53", Args: []string{"netexec"},
					}}},
				},
			},
		}
		Expect(hub.Create(ctx, deploy)).To(Succeed())
		var owner string
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
			g.Expect(deploy.Status.ReadyReplicas).To(BeEquivalentTo(3), "hub status %+v", deploy.Status)
			g.Expect(deploy.Status.AvailableReplicas).To(BeEquivalentTo(3))
		}).WithContext(ctx).Should(Succeed())
		for _, m := range env.Members {
			if err := m.Client.Get(ctx, framework.CopyKey(hubID, m.Name, ns, deploy.Name), &appsv1.Deployment{}); err == nil {
				owner = m.Name
			}
		}
		Expect(owner).NotTo(BeEmpty(), "no member runs the Deployment")
		member := framework.Member(env.Bed, owner)
		key := framework.CopyKey(hubID, owner, ns, deploy.Name)
		down := &appsv1.Deployment{}
		Expect(member.Client.Get(ctx, key, down)).To(Succeed())
		Expect(down.Status.AvailableReplicas).To(BeEquivalentTo(3))
		runningPods(ctx, member, key.Namespace, 3)
	})
})

// runningPods waits until the namespace of the member holds n pods, each bound to one of the
// member's nodes, Running and Ready, and returns them.
func runningPods(ctx context.Context, member *testbed.Cluster, ns string, n int) []corev1.Pod {
	GinkgoHelper()
	nodes := map[string]bool{}
	for i := range member.Nodes() {
		nodes[testbed.NodeName(member.Name, i)] = true
	}
	Expect(nodes).NotTo(BeEmpty(), "%s has no nodes", member.Name)
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		list := &corev1.PodList{}
		g.Expect(member.Client.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		g.Expect(list.Items).To(HaveLen(n))
		for _, p := range list.Items {
			g.Expect(nodes).To(HaveKey(p.Spec.NodeName), "pod %s is on a node of %s", p.Name, member.Name)
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s", p.Name)
			g.Expect(p.Status.PodIP).NotTo(BeEmpty(), "pod %s", p.Name)
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s", p.Name)
		}
		pods = list.Items
	}).WithContext(ctx).Should(Succeed())
	return pods
}
