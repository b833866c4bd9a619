package statefulset

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
)

const domain = "shared"

// template is a volumeClaimTemplate of 1Gi, ReadWriteOnce, that names no class.
func template(name string) corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
}

// webSet is the Kubernetes documentation's StatefulSet "web": nginx behind the headless
// Service "nginx", two replicas, one volumeClaimTemplate "www".
func webSet(ns string) *appsv1.StatefulSet {
	labels := map[string]string{"app": "nginx"}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: "nginx",
			Replicas:    ptr.To[int32](2),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "nginx", Image: "registry.k8s.io/nginx-slim:0.24",
					Ports:        []corev1.ContainerPort{{ContainerPort: 80, Name: "web"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "www", MountPath: "/usr/share/nginx/html"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{template("www")},
		},
	}
}

// claimNames are the claims of the set's templates for the ordinals, template by template
// within each ordinal.
func claimNames(set *appsv1.StatefulSet, ordinals ...int) []string {
	var out []string
	for _, o := range ordinals {
		for _, t := range set.Spec.VolumeClaimTemplates {
			out = append(out, fmt.Sprintf("%s-%s-%d", t.Name, set.Name, o))
		}
	}
	return out
}

// boundOn waits until every named claim's volume is Bound on one target, want unless it is
// empty, and in use there, and returns that target and each claim's volume handle.
func boundOn(ctx context.Context, ns, want string, names []string) (string, map[string]string) {
	GinkgoHelper()
	handles := map[string]string{}
	owner := ""
	Eventually(func(g Gomega) {
		owner = want
		for _, n := range names {
			vo := &storagev1alpha1.VolumeOwnership{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, vo)).To(Succeed())
			g.Expect(vo.Status.Settled()).To(BeTrue(), "%s: %s/%s: %s", n, vo.Status.Phase, vo.Status.Reason, vo.Status.Message)
			g.Expect(owner == "" || owner == vo.Status.Owner).To(BeTrue(), "claims on %s and %s", owner, vo.Status.Owner)
			owner = vo.Status.Owner
			pv := &corev1.PersistentVolume{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
			handles[n] = pv.Spec.CSI.VolumeHandle
		}
	}).WithContext(ctx).Should(Succeed())
	return owner, handles
}

// syncedOn waits until the hub object is Sync on exactly the target.
func syncedOn(ctx context.Context, obj client.Object, key string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		var synced []string
		for k, p := range workloadv1alpha1.Presences(obj) {
			if p.State == workloadv1alpha1.ResourceStateSync {
				synced = append(synced, k)
			}
		}
		g.Expect(synced).To(ConsistOf(key), "labels %v", obj.GetLabels())
	}).WithContext(ctx).Should(Succeed())
}

// memberClaims waits until the member's copy of the namespace holds exactly the named claims,
// each made by the target's syncer and Bound, and returns them by name: the member's
// StatefulSet controller made none of its own.
func memberClaims(ctx context.Context, key, ns string, names []string) map[string]corev1.PersistentVolumeClaim {
	GinkgoHelper()
	t := transform.Target{Key: key, Hub: hubID}
	out := map[string]corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		list := &corev1.PersistentVolumeClaimList{}
		g.Expect(framework.Member(env.Bed, key).Client.List(ctx, list, client.InNamespace(t.Namespace(ns)))).To(Succeed())
		var got []string
		for _, c := range list.Items {
			got = append(got, c.Name)
			g.Expect(t.Owns(&c)).To(BeTrue(), "claim %s in %s was not made by its syncer", c.Name, key)
			g.Expect(c.Status.Phase).To(Equal(corev1.ClaimBound), "claim %s in %s", c.Name, key)
			out[c.Name] = c
		}
		g.Expect(got).To(ConsistOf(names))
	}).WithContext(ctx).Should(Succeed())
	return out
}

// memberSet waits until the member runs the set: its copy exists with the hub's replicas, and
// retains its claims whatever the hub's policy, which the hub carries out on the hub claims.
func memberSet(ctx context.Context, key string, set *appsv1.StatefulSet) {
	GinkgoHelper()
	retain := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	Eventually(func(g Gomega) {
		down := &appsv1.StatefulSet{}
		g.Expect(framework.Member(env.Bed, key).Client.Get(ctx, framework.CopyKey(hubID, key, set.Namespace, set.Name), down)).To(Succeed())
		g.Expect(down.Spec.Replicas).To(Equal(set.Spec.Replicas))
		g.Expect(down.Spec.PersistentVolumeClaimRetentionPolicy).To(Equal(
			&appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenDeleted: retain, WhenScaled: retain}))
	}).WithContext(ctx).Should(Succeed())
}

// scale sets the hub set's replicas.
func scale(ctx context.Context, set *appsv1.StatefulSet, n int32) {
	GinkgoHelper()
	framework.Update(ctx, hub, set, func() { set.Spec.Replicas = ptr.To(n) })
}

// hubClaim reads a hub claim.
func hubClaim(ctx context.Context, ns, name string) *corev1.PersistentVolumeClaim {
	GinkgoHelper()
	c := &corev1.PersistentVolumeClaim{}
	Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c
}

// released waits until the storage released the volume, and checks it releases it only once.
func released(ctx context.Context, handle string) {
	GinkgoHelper()
	Eventually(func() bool { v, _ := storage.Volume(handle); return v.Deleted.IsZero() }).WithContext(ctx).Should(BeFalse(), "volume %s", handle)
	Consistently(func() int { v, _ := storage.Volume(handle); return v.Releases }).WithContext(ctx).Should(Equal(1), "volume %s", handle)
}

// kept checks that the storage keeps the volumes for a while.
func kept(ctx context.Context, handles ...string) {
	GinkgoHelper()
	Consistently(func(g Gomega) {
		for _, h := range handles {
			v, ok := storage.Volume(h)
			g.Expect(ok).To(BeTrue())
			g.Expect(v.Deleted).To(BeZero(), "volume %s", h)
			g.Expect(v.Releases).To(BeZero(), "volume %s", h)
		}
	}).WithContext(ctx).Should(Succeed())
}

// events waits until the namespace has events of the reason, and returns their notes.
func events(ctx context.Context, ns, reason string) []string {
	GinkgoHelper()
	var notes []string
	Eventually(func(g Gomega) {
		list := &eventsv1.EventList{}
		g.Expect(hub.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		notes = nil
		for _, e := range list.Items {
			if e.Reason == reason {
				notes = append(notes, e.Note)
			}
		}
		g.Expect(notes).NotTo(BeEmpty(), "no event %s in %s", reason, ns)
	}).WithContext(ctx).Should(Succeed())
	return notes
}

func values[K comparable, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// madeInMember creates the claim in the member of target key, as something in the member
// would, and returns the handle of the volume the member bound it to.
func madeInMember(ctx context.Context, key string, claim *corev1.PersistentVolumeClaim) string {
	GinkgoHelper()
	c := framework.Member(env.Bed, key).Client
	Expect(c.Create(ctx, claim)).To(Succeed())
	var handle string
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
		g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
		pv := &corev1.PersistentVolume{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: claim.Spec.VolumeName}, pv)).To(Succeed())
		handle = pv.Spec.CSI.VolumeHandle
	}).WithContext(ctx).Should(Succeed())
	return handle
}
