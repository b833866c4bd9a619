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

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A StatefulSet", func() {
	It("gets its claims on the hub, which its member uses as they are, and each ordinal keeps its volume and data when it moves", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		Expect(hub.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nginx", Labels: map[string]string{"app": "nginx"}},
			Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": "nginx"},
				Ports: []corev1.ServicePort{{Port: 80, Name: "web"}}},
		})).To(Succeed())
		set := webSet(ns)
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 0, 1)
		Expect(names).To(Equal([]string{"www-web-0", "www-web-1"}))
		owner, _ := boundOn(ctx, ns, "", names)
		for _, n := range names {
			c := hubClaim(ctx, ns, n)
			Expect(c.Labels).To(HaveKeyWithValue("app", "nginx"))
			Expect(c.Annotations).To(HaveKeyWithValue(storagev1alpha1.StatefulSetAnnotation, "web"))
			Expect(c.OwnerReferences).To(BeEmpty(), "whenDeleted Retain: the set does not own %s", n)
			Expect(c.Spec.StorageClassName).To(BeNil())
		}
		movesWithItsData(ctx, set, owner, names)
	})

	It("with two templates and ordinals from 5 does the same", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		set.Name = "db"
		set.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 5}
		set.Spec.VolumeClaimTemplates = append(set.Spec.VolumeClaimTemplates, template("logs"))
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 5, 6)
		Expect(names).To(Equal([]string{"www-db-5", "logs-db-5", "www-db-6", "logs-db-6"}))
		owner, _ := boundOn(ctx, ns, "", names)
		movesWithItsData(ctx, set, owner, names)
	})
})

// movesWithItsData checks that the set runs on owner with exactly its claims, writes a record
// to each claim's volume, cordons owner, and checks that the set runs on the other member with
// the same volumes and records, and that owner let go of them.
func movesWithItsData(ctx context.Context, set *appsv1.StatefulSet, owner string, names []string) {
	GinkgoHelper()
	_, handles := boundOn(ctx, set.Namespace, owner, names)
	syncedOn(ctx, set, owner)
	memberSet(ctx, owner, set)
	for n, c := range memberClaims(ctx, owner, set.Namespace, names) {
		pv := &corev1.PersistentVolume{}
		Expect(framework.Member(env.Bed, owner).Client.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv)).To(Succeed())
		Expect(pv.Spec.CSI.VolumeHandle).To(Equal(handles[n]), "the member's claim %s is the hub's", n)
	}
	for n, h := range handles {
		Eventually(func() error { return storage.Write(owner, h, n) }).WithContext(ctx).Should(Succeed())
	}

	to := environment.Other(owner)
	framework.Cordon(ctx, hub, owner, true)
	DeferCleanup(framework.Cordon, context.Background(), hub, owner, false)
	_, moved := boundOn(ctx, set.Namespace, to, names)
	Expect(moved).To(Equal(handles), "each ordinal keeps its own volume")
	for n, h := range moved {
		Expect(storage.Records(h)).To(Equal([]string{n}), "the data of %s", n)
		Eventually(func() error { return storage.Write(to, h, n+" after the move") }).WithContext(ctx).Should(Succeed())
	}
	syncedOn(ctx, set, to)
	memberSet(ctx, to, set)
	memberClaims(ctx, to, set.Namespace, names)
	memberClaims(ctx, owner, set.Namespace, nil)
}

var _ = Describe("Scaling a StatefulSet", func() {
	It("keeps the claims of the ordinals it no longer has with whenScaled Retain, and finds them again", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		set.Spec.Replicas = ptr.To[int32](3)
		Expect(hub.Create(ctx, set)).To(Succeed())
		owner, handles := boundOn(ctx, ns, "", claimNames(set, 0, 1, 2))

		scale(ctx, set, 1)
		memberSet(ctx, owner, set)
		Consistently(func(g Gomega) {
			for _, n := range claimNames(set, 1, 2) {
				vo := &storagev1alpha1.VolumeOwnership{}
				g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: n}, vo)).To(Succeed())
				g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
			}
		}).WithContext(ctx).Should(Succeed())
		kept(ctx, values(handles)...)

		scale(ctx, set, 3)
		memberSet(ctx, owner, set)
		_, again := boundOn(ctx, ns, owner, claimNames(set, 0, 1, 2))
		Expect(again).To(Equal(handles))
		memberClaims(ctx, owner, ns, claimNames(set, 0, 1, 2))
	})

	It("deletes them with whenScaled Delete, releasing each volume once, and makes new ones when it scales up", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		set.Spec.Replicas = ptr.To[int32](3)
		set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}
		Expect(hub.Create(ctx, set)).To(Succeed())
		owner, handles := boundOn(ctx, ns, "", claimNames(set, 0, 1, 2))
		memberSet(ctx, owner, set)

		scale(ctx, set, 1)
		for _, n := range claimNames(set, 1, 2) {
			framework.Gone(ctx, hub, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}})
			released(ctx, handles[n])
		}
		kept(ctx, handles["www-web-0"])
		memberClaims(ctx, owner, ns, claimNames(set, 0))

		scale(ctx, set, 3)
		_, again := boundOn(ctx, ns, owner, claimNames(set, 0, 1, 2))
		Expect(again["www-web-0"]).To(Equal(handles["www-web-0"]))
		for _, n := range claimNames(set, 1, 2) {
			Expect(again[n]).NotTo(Equal(handles[n]), "%s has a new volume", n)
		}
		memberClaims(ctx, owner, ns, claimNames(set, 0, 1, 2))
	})
})

var _ = Describe("Deleting a StatefulSet", func() {
	It("with whenDeleted Delete releases each of its volumes exactly once", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		set.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenScaled: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
		}
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 0, 1)
		owner, handles := boundOn(ctx, ns, "", names)
		memberSet(ctx, owner, set)
		for _, n := range names {
			refs := hubClaim(ctx, ns, n).OwnerReferences
			Expect(refs).To(HaveLen(1))
			Expect(refs[0].UID).To(Equal(set.UID))
			Expect(refs[0].Controller).To(Equal(ptr.To(true)))
		}

		Expect(hub.Delete(ctx, set)).To(Succeed())
		for _, n := range names {
			framework.Gone(ctx, hub, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n}})
			released(ctx, handles[n])
		}
	})

	It("with whenDeleted Retain releases none: its claims stay, Bound", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		set := webSet(ns)
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 0, 1)
		owner, handles := boundOn(ctx, ns, "", names)

		Expect(hub.Delete(ctx, set)).To(Succeed())
		framework.Gone(ctx, hub, set)
		kept(ctx, values(handles)...)
		_, after := boundOn(ctx, ns, owner, names)
		Expect(after).To(Equal(handles))
	})
})

var _ = Describe("A claim a member made itself", func() {
	It("is adopted when the member's StatefulSet controller made it first: upsynced, coordinated, used by the set, and moved with its data", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		Expect(hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "config"}})).To(Succeed())
		key := placedOn(ctx, ns)
		t := transform.Target{Key: key, Hub: hubID}
		downNS := &corev1.Namespace{}
		Eventually(func() error {
			return framework.Member(env.Bed, key).Client.Get(ctx, client.ObjectKey{Name: t.Namespace(ns)}, downNS)
		}).WithContext(ctx).Should(Succeed())

		By("making www-web-0 in the member, as its StatefulSet controller would have")
		made := template("www")
		made.Namespace, made.Name = t.Namespace(ns), "www-web-0"
		made.Labels = map[string]string{"app": "nginx"}
		handle := madeInMember(ctx, key, &made)

		By("adopting it on the hub before the set exists there")
		_, handles := boundOn(ctx, ns, key, []string{"www-web-0"})
		Expect(handles["www-web-0"]).To(Equal(handle), "the hub claim's volume is the one the member made")
		Expect(hubClaim(ctx, ns, "www-web-0").Labels).To(HaveKeyWithValue("app", "nginx"))
		memberClaims(ctx, key, ns, []string{"www-web-0"})
		Expect(events(ctx, ns, storagev1alpha1.ReasonClaimAdopted)).NotTo(BeEmpty())

		By("giving the set that claim, and a new one for ordinal 1")
		set := webSet(ns)
		Expect(hub.Create(ctx, set)).To(Succeed())
		names := claimNames(set, 0, 1)
		_, handles = boundOn(ctx, ns, key, names)
		Expect(handles["www-web-0"]).To(Equal(handle))
		Expect(hubClaim(ctx, ns, "www-web-0").Annotations).To(HaveKeyWithValue(storagev1alpha1.StatefulSetAnnotation, "web"))
		movesWithItsData(ctx, set, key, names)
	})
})

var _ = Describe("A claim a member made itself, of a claim whose volume is elsewhere", func() {
	It("is not adopted: an event says why, both volumes stay, and the hub's volume comes once the member's claim is deleted", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		Expect(hub.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "config"}})).To(Succeed())
		c := template("data")
		c.Namespace = ns
		Expect(hub.Create(ctx, &c)).To(Succeed())
		from, handles := boundOn(ctx, ns, "", []string{"data"})
		to := environment.Other(from)

		By("keeping the volume on " + from + " with a pod while the namespace moves to " + to)
		fromNS := transform.Target{Key: from, Hub: hubID}.Namespace(ns)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: fromNS, Name: "user"},
			Spec: corev1.PodSpec{
				NodeName:   "node-1",
				Containers: []corev1.Container{{Name: "app", Image: "app"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"},
				}}},
			},
		}
		Expect(framework.Member(env.Bed, from).Client.Create(ctx, pod)).To(Succeed())
		framework.Cordon(ctx, hub, from, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		toNS := transform.Target{Key: to, Hub: hubID}.Namespace(ns)
		Eventually(func() error {
			return framework.Member(env.Bed, to).Client.Get(ctx, client.ObjectKey{Namespace: toNS, Name: "config"}, &corev1.ConfigMap{})
		}).WithContext(ctx).Should(Succeed())

		By("making a claim of the same name in " + to + ", which provisions a volume of its own")
		made := template("data")
		made.Namespace = toNS
		own := madeInMember(ctx, to, &made)

		By("letting the volume go from " + from)
		Expect(framework.Member(env.Bed, from).Client.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func(g Gomega) {
			vo := &storagev1alpha1.VolumeOwnership{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, vo)).To(Succeed())
			g.Expect(vo.Status.Owner).To(Equal(to))
		}).WithContext(ctx).Should(Succeed())
		notes := events(ctx, ns, storagev1alpha1.ReasonClaimNotAdopted)
		Expect(notes[0]).To(And(ContainSubstring(to), ContainSubstring(made.Spec.VolumeName), ContainSubstring("not adopted")))
		Consistently(func(g Gomega) {
			g.Expect(framework.Member(env.Bed, to).Client.Get(ctx, client.ObjectKeyFromObject(&made), &made)).To(Succeed())
			g.Expect(transform.Target{Key: to, Hub: hubID}.Owns(&made)).To(BeFalse(), "the member's claim stays the member's")
		}).WithContext(ctx).Should(Succeed())
		kept(ctx, handles["data"], own)

		By("deleting the member's claim: the hub's claim and volume take its place")
		Expect(framework.Member(env.Bed, to).Client.Delete(ctx, &made)).To(Succeed())
		for n, c := range memberClaims(ctx, to, ns, []string{"data"}) {
			pv := &corev1.PersistentVolume{}
			Expect(framework.Member(env.Bed, to).Client.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv)).To(Succeed())
			Expect(pv.Spec.CSI.VolumeHandle).To(Equal(handles[n]))
		}
		kept(ctx, handles["data"])
	})
})

// placedOn waits until the namespace is synced to one target, and returns it.
func placedOn(ctx context.Context, ns string) string {
	GinkgoHelper()
	var key string
	Eventually(func(g Gomega) {
		n := &corev1.Namespace{}
		g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
		var keys []string
		for k, p := range workloadv1alpha1.Presences(n) {
			if p.State == workloadv1alpha1.ResourceStateSync && !p.Leaving {
				keys = append(keys, k)
			}
		}
		g.Expect(keys).To(HaveLen(1), "labels %v", n.Labels)
		key = keys[0]
	}).WithContext(ctx).Should(Succeed())
	return key
}
