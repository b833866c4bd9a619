package smoke

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

const (
	domain  = "shared"
	ns      = "smoke"
	pvcName = "data"
)

func claim(volumeName string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pvcName},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To(domain),
			VolumeName:       volumeName,
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
}

func createNamespace(ctx context.Context, c *testbed.Cluster) {
	Expect(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
}

// boundClaim waits until the claim in cluster c is Bound and returns its PV.
func boundClaim(ctx context.Context, c *testbed.Cluster) *corev1.PersistentVolume {
	pvc := &corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		g.Expect(c.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pvcName}, pvc)).To(Succeed())
		g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		g.Expect(pvc.Spec.VolumeName).NotTo(BeEmpty())
	}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
	pv := &corev1.PersistentVolume{}
	Expect(c.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
	Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
	return pv
}

var _ = Describe("The test bed", Ordered, func() {
	var (
		m1, m2  *testbed.Cluster
		storage *simstorage.Storage
		handle  string
	)

	BeforeAll(func() {
		m1, m2, storage = bed.Member("m1"), bed.Member("m2"), bed.Storage(domain)
		Expect(m1).NotTo(BeNil())
		Expect(m2).NotTo(BeNil())
		Expect(storage).NotTo(BeNil())
	})

	It("runs a hub and two members that share one storage domain", func(ctx SpecContext) {
		for _, m := range []*testbed.Cluster{m1, m2} {
			class := &storagev1.StorageClass{}
			Expect(m.Client.Get(ctx, client.ObjectKey{Name: domain}, class)).To(Succeed())
			Expect(class.Provisioner).To(Equal(storage.Provisioner()))
			for _, crd := range []string{
				"volumesnapshots.snapshot.storage.k8s.io", "volumesnapshotcontents.snapshot.storage.k8s.io",
				"volumesnapshotclasses.snapshot.storage.k8s.io", "replicationsources.volsync.backube",
				"replicationdestinations.volsync.backube", "networkfences.csiaddons.openshift.io",
			} {
				Expect(m.Client.Get(ctx, client.ObjectKey{Name: crd}, &apiextensionsv1.CustomResourceDefinition{})).
					To(Succeed(), "CRD %s in %s", crd, m.Name)
			}
		}
		Expect(bed.Hub.Kubeconfig).To(BeAnExistingFile())
	})

	It("binds nothing on the hub: hub objects are records", func(ctx SpecContext) {
		hub := bed.Hub
		createNamespace(ctx, hub)
		Expect(hub.Client.Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: domain}, Provisioner: storage.Provisioner(),
		})).To(Succeed())
		Expect(hub.Client.Create(ctx, claim(""))).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Consistently(func(g Gomega) {
			g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pvcName}, pvc)).To(Succeed())
			g.Expect(pvc.Spec.VolumeName).To(BeEmpty())
			g.Expect(pvc.Annotations).NotTo(HaveKey("volume.kubernetes.io/storage-provisioner"))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
	})

	It("provisions a claim in member 1 and lets member 1's binder bind it", func(ctx SpecContext) {
		createNamespace(ctx, m1)
		Expect(m1.Client.Create(ctx, claim(""))).To(Succeed())
		pv := boundClaim(ctx, m1)
		Expect(pv.Spec.CSI).NotTo(BeNil())
		Expect(pv.Spec.CSI.Driver).To(Equal(storage.Provisioner()))
		Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimDelete))
		handle = pv.Spec.CSI.VolumeHandle
		Eventually(func() []string {
			v, _ := storage.Volume(handle)
			return v.Holders
		}).WithContext(ctx).Should(Equal([]string{"m1"}))
		Expect(storage.CheckSingleOwner()).To(Succeed())
	})

	It("refuses to attach the same handle pre-bound in member 2, and records the refusal", func(ctx SpecContext) {
		createNamespace(ctx, m2)
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "prebound"},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              domain,
				ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: pvcName},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: storage.Provisioner(), VolumeHandle: handle,
				}},
			},
		}
		Expect(m2.Client.Create(ctx, pv)).To(Succeed())
		Expect(m2.Client.Create(ctx, claim(pv.Name))).To(Succeed())
		Expect(boundClaim(ctx, m2).Name).To(Equal(pv.Name))

		Eventually(storage.CheckSingleOwner).WithContext(ctx).Should(MatchError(ContainSubstring(handle)))
		Consistently(func() []string {
			v, _ := storage.Volume(handle)
			return v.Holders
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Equal([]string{"m1"}))
	})

	It("releases the backing volume exactly once when the last claim with Delete goes", func(ctx SpecContext) {
		By("removing member 2's Retain copy, which must not release anything")
		Expect(m2.Client.Delete(ctx, claim(""))).To(Succeed())
		Eventually(func(g Gomega) {
			pv := &corev1.PersistentVolume{}
			g.Expect(m2.Client.Get(ctx, client.ObjectKey{Name: "prebound"}, pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(m2.Client.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "prebound"}})).To(Succeed())
		Eventually(func() []string {
			v, _ := storage.Volume(handle)
			return v.Holders
		}).WithContext(ctx).Should(Equal([]string{"m1"}))
		v, _ := storage.Volume(handle)
		Expect(v.Releases).To(BeZero())

		By("deleting member 1's claim, whose PV says Delete")
		pvName := boundClaim(ctx, m1).Name
		Expect(m1.Client.Delete(ctx, claim(""))).To(Succeed())
		Eventually(func(g Gomega) {
			v, _ := storage.Volume(handle)
			g.Expect(v.Deleted).NotTo(BeZero())
			g.Expect(v.Holders).To(BeEmpty())
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func() error {
			return m1.Client.Get(ctx, client.ObjectKey{Name: pvName}, &corev1.PersistentVolume{})
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("not found")))
		v, _ = storage.Volume(handle)
		Expect(v.Holders).To(BeEmpty(), "the storage detached the volume before the member's PV could go")
		Consistently(func() int {
			v, _ := storage.Volume(handle)
			return v.Releases
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Equal(1))
		Expect(storage.CheckReleases()).To(Succeed())
	})

	It("keeps a member's data when its API server stops and starts again", func(ctx SpecContext) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept"}, Data: map[string]string{"k": "v"}}
		Expect(m1.Client.Create(ctx, cm)).To(Succeed())

		Expect(m1.StopAPIServer()).To(Succeed())
		Expect(m1.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})).NotTo(Succeed())
		Expect(m1.StartAPIServer(ctx)).To(Succeed())

		got := &corev1.ConfigMap{}
		Expect(m1.Client.Get(ctx, client.ObjectKeyFromObject(cm), got)).To(Succeed())
		Expect(got.Data).To(Equal(cm.Data))

		By("provisioning again: the binder and the storage driver reconnected")
		Expect(m1.Client.Create(ctx, claim(""))).To(Succeed())
		Expect(boundClaim(ctx, m1).Spec.CSI.Driver).To(Equal(storage.Provisioner()))
	})
})
