package security

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A member's syncer", func() {
	It("changes no spec, data or labels of what the hub places on its target, and still syncs it and reports its status", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		web := deployment(ns, "web", "registry.example/web:1")
		Expect(user.Create(ctx, web)).To(Succeed())
		creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "s3cret"}}
		Expect(user.Create(ctx, creds)).To(Succeed())
		member := env.Member(key)
		down := &appsv1.Deployment{}
		Eventually(func() error { return member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "web"), down) }).WithContext(ctx).Should(Succeed())

		as := syncer(key)
		for what, change := range map[string]func(*appsv1.Deployment){
			"the image":     func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "evil:latest" },
			"a label":       func(d *appsv1.Deployment) { metav1.SetMetaDataLabel(&d.ObjectMeta, "tier", "evil") },
			"an annotation": func(d *appsv1.Deployment) { metav1.SetMetaDataAnnotation(&d.ObjectMeta, "note", "evil") },
			"its owners": func(d *appsv1.Deployment) {
				d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: "creds", UID: "x"}}
			},
			"another's finalizer": func(d *appsv1.Deployment) { d.Finalizers = append(d.Finalizers, "example.com/keep") },
		} {
			By("changing " + what)
			expectRefused(patch(ctx, as, client.ObjectKeyFromObject(web), &appsv1.Deployment{}, change), ruleHubSource)
		}
		By("changing a Secret's data")
		expectRefused(patch(ctx, as, client.ObjectKeyFromObject(creds), &corev1.Secret{}, func(s *corev1.Secret) {
			s.Data["password"] = []byte("known")
		}), ruleHubSource)

		By("reporting the status, as it does for what runs on its target")
		cur := &appsv1.Deployment{}
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(web), cur)).To(Succeed())
		before := cur.DeepCopy()
		cur.Status.ObservedGeneration = cur.Generation
		Expect(as.Status().Patch(ctx, cur, client.MergeFrom(before))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "web"), down)).To(Succeed())
			g.Expect(down.Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/web:1"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("creates nothing in a namespace not placed on its target", func(ctx SpecContext) {
		ns, _ := tenant(ctx, false)
		claim := environment.Claim(ns, "planted", domain, corev1.ReadWriteOnce)
		workloadv1alpha1.SetState(claim, "m1", workloadv1alpha1.ResourceStateUpsync)
		// Its identity holds no grant there; were it given one, the admission policy
		// custody-syncer-target would still refuse (ruleNamespace).
		expectDenied(syncer("m1").Create(ctx, claim))
	})

	It("upsyncs no PV that becomes the volume of a claim placed on another target", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		// A class no member has: nothing is provisioned for the claim, which waits for a volume.
		victim := environment.Claim(ns, "data", "no-such-class", corev1.ReadWriteOnce)
		Expect(user.Create(ctx, victim)).To(Succeed())
		vo := &storagev1alpha1.VolumeOwnership{}
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(victim), vo)).To(Succeed())
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Pending))
		}).WithContext(ctx).Should(Succeed())

		attacker := environment.Other(key)
		forged := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: workloadv1alpha1.UpsyncedPVName(victim.UID)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				ClaimRef:                      &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: "data"},
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					CSI: &corev1.CSIPersistentVolumeSource{Driver: storage.Provisioner(), VolumeHandle: "chosen-by-" + attacker},
				},
			},
		}
		workloadv1alpha1.SetState(forged, attacker, workloadv1alpha1.ResourceStateUpsync)
		Expect(syncer(attacker).Create(ctx, forged)).To(Succeed(), "a syncer upsyncs the PVs its member provisions")
		DeferCleanup(func(ctx SpecContext) { Expect(client.IgnoreNotFound(hub.Delete(ctx, forged))).To(Succeed()) })
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(victim), victim)).To(Succeed())
			g.Expect(victim.Spec.VolumeName).To(BeEmpty())
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(victim), vo)).To(Succeed())
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Pending), "%s: %s", vo.Status.Reason, vo.Status.Message)
		}).WithContext(ctx).Should(Succeed())
	})
})

// deployment is a Deployment of one replica of image.
func deployment(ns, name, image string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: image}}},
			},
		},
	}
}

// patch patches the object key as c with change, made to the object as the hub holds it now.
func patch[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, change func(T)) error {
	GinkgoHelper()
	Expect(hub.Get(ctx, key, obj)).To(Succeed())
	orig := obj.DeepCopyObject().(client.Object)
	change(obj)
	return c.Patch(ctx, obj, client.MergeFrom(orig))
}
