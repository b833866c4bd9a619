package smoke

import (
	"context"
	"fmt"
	"time"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
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
	fenceNS = "fencing"
	pvcName = "data"
)

func claim(namespace, volumeName string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: pvcName},
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

func createNamespace(ctx context.Context, c *testbed.Cluster, name string) {
	Expect(c.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
}

// boundClaim waits until the claim in the namespace of cluster c is Bound and returns its PV.
func boundClaim(ctx context.Context, c *testbed.Cluster, namespace string) *corev1.PersistentVolume {
	pvc := &corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		g.Expect(c.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: pvcName}, pvc)).To(Succeed())
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
		createNamespace(ctx, hub, ns)
		Expect(hub.Client.Create(ctx, &storagev1.StorageClass{
			ObjectMeta: metav1.ObjectMeta{Name: domain}, Provisioner: storage.Provisioner(),
		})).To(Succeed())
		Expect(hub.Client.Create(ctx, claim(ns, ""))).To(Succeed())
		pvc := &corev1.PersistentVolumeClaim{}
		Consistently(func(g Gomega) {
			g.Expect(hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: pvcName}, pvc)).To(Succeed())
			g.Expect(pvc.Spec.VolumeName).To(BeEmpty())
			g.Expect(pvc.Annotations).NotTo(HaveKey("volume.kubernetes.io/storage-provisioner"))
		}).WithContext(ctx).WithTimeout(5 * time.Second).Should(Succeed())
	})

	It("provisions a claim in member 1 and lets member 1's binder bind it", func(ctx SpecContext) {
		createNamespace(ctx, m1, ns)
		Expect(m1.Client.Create(ctx, claim(ns, ""))).To(Succeed())
		pv := boundClaim(ctx, m1, ns)
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
		createNamespace(ctx, m2, ns)
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
		Expect(m2.Client.Create(ctx, claim(ns, pv.Name))).To(Succeed())
		Expect(boundClaim(ctx, m2, ns).Name).To(Equal(pv.Name))
		bound := time.Now()

		Eventually(storage.CheckSingleOwner).WithContext(ctx).Should(MatchError(ContainSubstring(handle)))
		AddReportEntry("forced double attach", ReportEntryVisibilityAlways,
			fmt.Sprintf("refused and recorded %s after member 2 bound the PV: %v", time.Since(bound).Round(time.Millisecond), storage.CheckSingleOwner()))
		Consistently(func() []string {
			v, _ := storage.Volume(handle)
			return v.Holders
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Equal([]string{"m1"}))
	})

	It("releases the backing volume exactly once when the last claim with Delete goes", func(ctx SpecContext) {
		By("removing member 2's Retain copy, which must not release anything")
		Expect(m2.Client.Delete(ctx, claim(ns, ""))).To(Succeed())
		Eventually(func(g Gomega) {
			pv := &corev1.PersistentVolume{}
			g.Expect(m2.Client.Get(ctx, client.ObjectKey{Name: "prebound"}, pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(m2.Client.Delete(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "prebound"}})).To(Succeed())
		Eventually(func() error {
			return m2.Client.Get(ctx, client.ObjectKey{Name: "prebound"}, &corev1.PersistentVolume{})
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("not found")))
		v, _ := storage.Volume(handle)
		Expect(v.Holders).To(Equal([]string{"m1"}))
		Expect(v.Releases).To(BeZero())

		By("deleting member 1's claim, whose PV says Delete")
		pvName := boundClaim(ctx, m1, ns).Name
		Expect(m1.Client.Delete(ctx, claim(ns, ""))).To(Succeed())
		Eventually(func() time.Time {
			v, _ := storage.Volume(handle)
			return v.Deleted
		}).WithContext(ctx).WithTimeout(time.Minute).ShouldNot(BeZero())
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
		Expect(m1.Client.Create(ctx, claim(ns, ""))).To(Succeed())
		Expect(boundClaim(ctx, m1, ns).Spec.CSI.Driver).To(Equal(storage.Provisioner()))
	})
})

// networkFence returns a NetworkFence that fences cidrs with the NetworkFenceClass class.
func networkFence(name, class string, cidrs []string) *csiaddonsv1alpha1.NetworkFence {
	return &csiaddonsv1alpha1.NetworkFence{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: csiaddonsv1alpha1.NetworkFenceSpec{
			NetworkFenceClassName: class, FenceState: csiaddonsv1alpha1.Fenced, Cidrs: cidrs,
		},
	}
}

var _ = Describe("The simulated storage's fencing", Ordered, func() {
	var (
		m1, m2  *testbed.Cluster
		storage *simstorage.Storage
		handle  string
	)

	// status reads the status of member 2's NetworkFence called name.
	status := func(ctx context.Context, name string) func(Gomega) csiaddonsv1alpha1.NetworkFenceStatus {
		return func(g Gomega) csiaddonsv1alpha1.NetworkFenceStatus {
			nf := &csiaddonsv1alpha1.NetworkFence{}
			g.Expect(m2.Client.Get(ctx, client.ObjectKey{Name: name}, nf)).To(Succeed())
			return nf.Status
		}
	}
	succeeded := func(message string) csiaddonsv1alpha1.NetworkFenceStatus {
		return csiaddonsv1alpha1.NetworkFenceStatus{Result: csiaddonsv1alpha1.FencingOperationResultSucceeded, Message: message}
	}
	// setFenceState patches member 2's NetworkFence called name to state.
	setFenceState := func(ctx context.Context, name string, state csiaddonsv1alpha1.FenceState) {
		nf := &csiaddonsv1alpha1.NetworkFence{}
		Expect(m2.Client.Get(ctx, client.ObjectKey{Name: name}, nf)).To(Succeed())
		patch := client.MergeFrom(nf.DeepCopy())
		nf.Spec.FenceState = state
		Expect(m2.Client.Patch(ctx, nf, patch)).To(Succeed())
	}
	// deleteFence deletes member 2's NetworkFence called name and waits until it is gone.
	deleteFence := func(ctx context.Context, name string) {
		Expect(m2.Client.Delete(ctx, &csiaddonsv1alpha1.NetworkFence{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
		Eventually(func() error {
			return m2.Client.Get(ctx, client.ObjectKey{Name: name}, &csiaddonsv1alpha1.NetworkFence{})
		}).WithContext(ctx).WithTimeout(time.Minute).Should(MatchError(ContainSubstring("not found")))
	}

	BeforeAll(func(ctx SpecContext) {
		m1, m2, storage = bed.Member("m1"), bed.Member("m2"), bed.Storage(domain)
		createNamespace(ctx, m1, fenceNS)
		Expect(m1.Client.Create(ctx, claim(fenceNS, ""))).To(Succeed())
		handle = boundClaim(ctx, m1, fenceNS).Spec.CSI.VolumeHandle
		Eventually(func() []string {
			v, _ := storage.Volume(handle)
			return v.Holders
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Equal([]string{"m1"}))
	})

	It("gives every member node CIDRs of its own and the domain's NetworkFenceClass", func(ctx SpecContext) {
		Expect(m1.NodeCIDRs).NotTo(BeEmpty())
		Expect(m1.NodeCIDRs).NotTo(Equal(m2.NodeCIDRs))
		for _, m := range []*testbed.Cluster{m1, m2} {
			class := &csiaddonsv1alpha1.NetworkFenceClass{}
			Expect(m.Client.Get(ctx, client.ObjectKey{Name: domain}, class)).To(Succeed())
			Expect(class.Spec.Provisioner).To(Equal(storage.Provisioner()))
		}
	})

	It("fences member 1 through a NetworkFence in member 2, once the slow storage answers", func(ctx SpecContext) {
		Expect(storage.Write("m1", handle, "before")).To(Succeed())
		storage.SlowFencing(1500 * time.Millisecond)
		DeferCleanup(storage.SlowFencing, time.Duration(0))
		Expect(m2.Client.Create(ctx, networkFence("fence-m1", domain, m1.NodeCIDRs))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(status(ctx, "fence-m1")(g)).To(BeZero())
			g.Expect(storage.Fenced("m1")).To(BeFalse())
		}).WithContext(ctx).WithTimeout(time.Second).Should(Succeed())

		Eventually(status(ctx, "fence-m1")).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal(succeeded(csiaddonsv1alpha1.FenceOperationSuccessfulMessage)))
		Expect(storage.Fenced("m1")).To(BeTrue())
		Expect(storage.Fenced("m2")).To(BeFalse())
		nf := &csiaddonsv1alpha1.NetworkFence{}
		Expect(m2.Client.Get(ctx, client.ObjectKey{Name: "fence-m1"}, nf)).To(Succeed())
		Expect(nf.Finalizers).To(ContainElement("csiaddons.openshift.io/network-fence"))
	})

	It("refuses a fenced member's writes to a volume it has attached", func() {
		Expect(storage.Write("m1", handle, "while fenced")).To(MatchError(simstorage.ErrWriteRefused))
		Expect(storage.Refusals()).To(ContainElement(And(
			HaveField("Kind", simstorage.WriteFenced), HaveField("Member", "m1"), HaveField("Handle", handle))))
	})

	It("unfences member 1 when the NetworkFence says Unfenced, and accepts its writes again", func(ctx SpecContext) {
		setFenceState(ctx, "fence-m1", csiaddonsv1alpha1.Unfenced)
		Eventually(status(ctx, "fence-m1")).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal(succeeded(csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage)))
		Expect(storage.Fenced("m1")).To(BeFalse())
		Expect(storage.Write("m1", handle, "after")).To(Succeed())
		Expect(storage.Records(handle)).To(Equal([]string{"before", "after"}))
	})

	It("lets an unfenced NetworkFence be deleted", func(ctx SpecContext) {
		deleteFence(ctx, "fence-m1")
		Expect(storage.Fenced("m1")).To(BeFalse())
		Expect(storage.CheckWrites()).To(Succeed())
	})

	It("keeps member 1 fenced when a Fenced NetworkFence is deleted, as csi-addons does", func(ctx SpecContext) {
		Expect(m2.Client.Create(ctx, networkFence("deleted-fenced", domain, m1.NodeCIDRs))).To(Succeed())
		Eventually(status(ctx, "deleted-fenced")).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal(succeeded(csiaddonsv1alpha1.FenceOperationSuccessfulMessage)))
		deleteFence(ctx, "deleted-fenced")
		Expect(storage.Fenced("m1")).To(BeTrue())

		By("unfencing through a NetworkFence that says Unfenced")
		unfence := networkFence("unfence-m1", domain, m1.NodeCIDRs)
		unfence.Spec.FenceState = csiaddonsv1alpha1.Unfenced
		Expect(m2.Client.Create(ctx, unfence)).To(Succeed())
		Eventually(status(ctx, "unfence-m1")).WithContext(ctx).WithTimeout(time.Minute).
			Should(Equal(succeeded(csiaddonsv1alpha1.UnFenceOperationSuccessfulMessage)))
		Expect(storage.Fenced("m1")).To(BeFalse())
		deleteFence(ctx, "unfence-m1")
	})

	It("reports a failing storage and a missing NetworkFenceClass as Failed", func(ctx SpecContext) {
		storage.FailFencing("the array is unreachable")
		DeferCleanup(storage.FailFencing, "")
		Expect(m2.Client.Create(ctx, networkFence("fence-fails", domain, m1.NodeCIDRs))).To(Succeed())
		Eventually(status(ctx, "fence-fails")).WithContext(ctx).WithTimeout(time.Minute).Should(Equal(csiaddonsv1alpha1.NetworkFenceStatus{
			Result: csiaddonsv1alpha1.FencingOperationResultFailed, Message: "the array is unreachable",
		}))
		Expect(storage.Fenced("m1")).To(BeFalse())

		Expect(m2.Client.Create(ctx, networkFence("no-class", "no-such-class", m1.NodeCIDRs))).To(Succeed())
		Eventually(status(ctx, "no-class")).WithContext(ctx).WithTimeout(time.Minute).Should(And(
			HaveField("Result", csiaddonsv1alpha1.FencingOperationResultFailed),
			HaveField("Message", ContainSubstring(`"no-such-class"`))))
		Expect(storage.Fenced("m1")).To(BeFalse())

		deleteFence(ctx, "fence-fails")
		deleteFence(ctx, "no-class")
	})
})
