package dr

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/simstorage"
)

// app makes a namespace of its own placed in location; both go after the spec.
func app(ctx context.Context, location string) string {
	GinkgoHelper()
	ns := framework.App(ctx, hub, location)
	framework.DeleteAfter(hub, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, framework.Placement(ns, location))
	return ns
}

// database is the Deployment "db" of ns: one replica, which mounts the claim "data".
func database(ns string) *appsv1.Deployment {
	labels := map[string]string{"app": "db"}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "db", Image: "db", VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
			}}},
	}
}

// boundClaim makes an RWO claim of the member's default class and waits until it is Bound on
// owner; it returns its record and hub PV.
func boundClaim(ctx context.Context, ns, name, owner string) (*storagev1alpha1.VolumeOwnership, *corev1.PersistentVolume) {
	GinkgoHelper()
	// The claim names no class: it gets each member's default, as in a single cluster.
	return bound(ctx, claimOf(ns, name, nil), owner)
}

// bound makes the claim and waits until it is Bound on owner; it returns its record and hub
// PV.
func bound(ctx context.Context, claim *corev1.PersistentVolumeClaim, owner string) (*storagev1alpha1.VolumeOwnership, *corev1.PersistentVolume) {
	GinkgoHelper()
	Expect(hub.Create(ctx, claim)).To(Succeed())
	vo := &storagev1alpha1.VolumeOwnership{}
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(claim), vo)).To(Succeed())
		g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		g.Expect(vo.Status.Owner).To(Equal(owner))
	}).WithContext(ctx).Should(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
	return vo, pv
}

// protect pairs east with west for the spec, named after ns, and waits until the records of
// claims have replicas and the pair protects them all.
func protect(ctx context.Context, ns string, spec schedulingv1alpha1.LocationPairSpec, claims ...*storagev1alpha1.VolumeOwnership) *schedulingv1alpha1.LocationPair {
	GinkgoHelper()
	pair := pairOf(ctx, ns, spec)
	Eventually(func(g Gomega) {
		for _, vo := range claims {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica).NotTo(BeNil(), "%s has no replica", vo.Name)
			// Both sides reported the sync that made it, whose time is then settled.
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(vr.Status.Destination).NotTo(BeNil())
			g.Expect(vr.Status.Destination.LatestImage).To(Equal(vo.Status.Replica.Snapshot))
			g.Expect(vr.Status.Source).NotTo(BeNil())
			g.Expect(vr.Status.Source.LastSyncTime).NotTo(BeNil())
			g.Expect(vr.Status.Source.LastSyncTime.Before(vr.Status.Destination.LatestImageTime)).To(BeFalse())
			g.Expect(vo.Status.Replica.Time.Time).To(BeTemporally("==", dr.ImageTime(vr).Time))
		}
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
		g.Expect(pair.Status.ProtectedVolumes).To(Equal(int32(len(claims))))
	}).WithContext(ctx).Should(Succeed())
	return pair
}

// pairOf makes the pair ns of east and west, which goes after the spec.
func pairOf(ctx context.Context, ns string, spec schedulingv1alpha1.LocationPairSpec) *schedulingv1alpha1.LocationPair {
	GinkgoHelper()
	spec.Primary, spec.Secondary = "east", "west"
	pair := &schedulingv1alpha1.LocationPair{ObjectMeta: metav1.ObjectMeta{Name: ns}, Spec: spec}
	Expect(hub.Create(ctx, pair)).To(Succeed())
	framework.DeleteAfter(hub, pair)
	return pair
}

// followRestarting follows the pair's switch until it completed, and restarts the controller
// at each step of it, as soon as the step shows: the controller stops, and a new one takes up
// what the stopped one wrote. It calls at with each step first, and returns the steps seen.
func followRestarting(ctx context.Context, pair *schedulingv1alpha1.LocationPair, at func(step string)) []string {
	GinkgoHelper()
	var seen []string
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		a := pair.Status.LastAction
		g.Expect(a).NotTo(BeNil())
		if len(seen) == 0 || seen[len(seen)-1] != a.Progression {
			seen = append(seen, a.Progression)
			at(a.Progression)
			if a.Progression != schedulingv1alpha1.ProgressionCompleted {
				Expect(env.StopController()).To(Succeed())
				Expect(env.StartController()).To(Succeed())
			}
		}
		g.Expect(a.Progression).To(Equal(schedulingv1alpha1.ProgressionCompleted), "%s since %s", a.Progression, a.ProgressionTime)
	}).WithContext(ctx).WithPolling(50 * time.Millisecond).Should(Succeed())
	GinkgoWriter.Printf("the controller restarted at %v\n", seen[:len(seen)-1])
	return seen
}

// write writes n records "<member> <prefix> <i>" to the volume as member, and returns them.
func write(ctx context.Context, storage *simstorage.Storage, member, handle, prefix string, n int) []string {
	GinkgoHelper()
	var written []string
	for i := range n {
		record := fmt.Sprintf("%s %s %d", member, prefix, i)
		Eventually(func() error { return storage.Write(member, handle, record) }).WithContext(ctx).Should(Succeed())
		written = append(written, record)
	}
	return written
}
