package dr

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/simstorage"
)

// app makes a namespace of its own and a Placement of it in location; both go after the spec.
func app(ctx context.Context, location string) string {
	GinkgoHelper()
	ns := "app-" + rand.String(5)
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"app": ns}}}
	Expect(hub.Create(ctx, namespace)).To(Succeed())
	placement := &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		Spec: schedulingv1alpha1.PlacementSpec{LocationName: location,
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": ns}}},
	}
	Expect(hub.Create(ctx, placement)).To(Succeed())
	DeferCleanup(func(ctx context.Context) {
		Expect(client.IgnoreNotFound(hub.Delete(ctx, namespace))).To(Succeed())
		Expect(client.IgnoreNotFound(hub.Delete(ctx, placement))).To(Succeed())
	})
	return ns
}

// boundClaim makes an RWO claim of the member's default class and waits until it is Bound on
// owner; it returns its record and hub PV.
func boundClaim(ctx context.Context, ns, name, owner string) (*storagev1alpha1.VolumeOwnership, *corev1.PersistentVolume) {
	GinkgoHelper()
	// The claim names no class: it gets each member's default, as in a single cluster.
	Expect(hub.Create(ctx, claimOf(ns, name, nil))).To(Succeed())
	vo := &storagev1alpha1.VolumeOwnership{}
	Eventually(func(g Gomega) {
		g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vo)).To(Succeed())
		g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		g.Expect(vo.Status.Owner).To(Equal(owner))
	}).WithContext(ctx).Should(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(hub.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
	return vo, pv
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
