package syncer

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/simstorage"
)

// phaseRecorder records every phase a member's claims and PVs go through, so that a spec
// can assert that something never happened.
type phaseRecorder struct {
	mu      sync.Mutex
	claims  map[string][]corev1.PersistentVolumeClaimPhase
	volumes map[string][]corev1.PersistentVolumePhase
	stop    context.CancelFunc
	factory informers.SharedInformerFactory
}

func recordPhases(cfg *rest.Config) *phaseRecorder {
	ctx, cancel := context.WithCancel(context.Background())
	p := &phaseRecorder{
		claims: map[string][]corev1.PersistentVolumeClaimPhase{}, volumes: map[string][]corev1.PersistentVolumePhase{},
		stop: cancel, factory: informers.NewSharedInformerFactory(kubernetes.NewForConfigOrDie(cfg), 0),
	}
	onClaim := func(obj any) {
		pvc := obj.(*corev1.PersistentVolumeClaim)
		p.mu.Lock()
		defer p.mu.Unlock()
		key := pvc.Namespace + "/" + pvc.Name
		if seen := p.claims[key]; len(seen) == 0 || seen[len(seen)-1] != pvc.Status.Phase {
			p.claims[key] = append(seen, pvc.Status.Phase)
		}
	}
	onVolume := func(obj any) {
		pv := obj.(*corev1.PersistentVolume)
		p.mu.Lock()
		defer p.mu.Unlock()
		if seen := p.volumes[pv.Name]; len(seen) == 0 || seen[len(seen)-1] != pv.Status.Phase {
			p.volumes[pv.Name] = append(seen, pv.Status.Phase)
		}
	}
	_, err := p.factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, obj any) { onClaim(obj) },
	})
	Expect(err).NotTo(HaveOccurred())
	_, err = p.factory.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onVolume, UpdateFunc: func(_, obj any) { onVolume(obj) },
	})
	Expect(err).NotTo(HaveOccurred())
	p.factory.Start(ctx.Done())
	p.factory.WaitForCacheSync(ctx.Done())
	return p
}

func (p *phaseRecorder) close() {
	p.stop()
	p.factory.Shutdown()
}

// lostClaims lists the claims that were ever Lost, with their phases.
func (p *phaseRecorder) lostClaims() map[string][]corev1.PersistentVolumeClaimPhase {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]corev1.PersistentVolumeClaimPhase{}
	for k, phases := range p.claims {
		for _, ph := range phases {
			if ph == corev1.ClaimLost {
				out[k] = phases
			}
		}
	}
	return out
}

// volumePhases returns the phases the PV went through.
func (p *phaseRecorder) volumePhases(name string) []corev1.PersistentVolumePhase {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]corev1.PersistentVolumePhase(nil), p.volumes[name]...)
}

// claimFor is a claim on the shared storage domain.
func claimFor(ns, name string, mode corev1.PersistentVolumeAccessMode, targets ...string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: synced(nil, targets...)},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{mode},
			StorageClassName: ptr.To("shared"),
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			},
		},
	}
}

// boundClaim waits until the claim is Bound in the member and returns it.
func boundClaim(ctx context.Context, c client.Client, key client.ObjectKey) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{}
	Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, pvc)).To(Succeed())
		g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
	}).WithContext(ctx).Should(Succeed())
	return pvc
}

var _ = Describe("Volumes", Ordered, func() {
	var (
		hub, m1, m2    client.Client
		storage        *simstorage.Storage
		rec1, rec2     *phaseRecorder
		ns             string
		claim          *corev1.PersistentVolumeClaim
		hubPVName      string
		memberPV       *corev1.PersistentVolume
		memberClaimUID types.UID
	)

	// provisionedInM1 creates a ReadWriteOnce claim synced to m1 alone and returns it, the PV
	// m1 provisioned for it, and the hub PV upsynced from that one.
	provisionedInM1 := func(ctx context.Context, name string) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume, *corev1.PersistentVolume) {
		GinkgoHelper()
		c := claimFor(ns, name, corev1.ReadWriteOnce, "m1")
		Expect(hub.Create(ctx, c)).To(Succeed())
		down := boundClaim(ctx, m1, downKey("m1", c))
		pv := &corev1.PersistentVolume{}
		Expect(m1.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, pv)).To(Succeed())
		upsynced := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: workloadv1alpha1.UpsyncedPVName(c.UID)}}
		Eventually(fetch(ctx, hub, client.ObjectKeyFromObject(upsynced), upsynced)).WithContext(ctx).Should(Succeed())
		return c, pv, upsynced
	}

	// dropCopyHeld asks claim to leave m1, held as coordination holds it, deletes its copy in
	// m1 behind the syncer, and waits until pv, the PV m1 provisioned for it, is Released.
	dropCopyHeld := func(ctx context.Context, claim *corev1.PersistentVolumeClaim, pv *corev1.PersistentVolume) {
		GinkgoHelper()
		framework.Update(ctx, hub, claim, func() {
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, workloadv1alpha1.DeletionAnnotation("m1"), time.Now().UTC().Format(time.RFC3339))
			metav1.SetMetaDataAnnotation(&claim.ObjectMeta, workloadv1alpha1.FinalizersAnnotation("m1"), "coordination.example/drain")
		})
		down := &corev1.PersistentVolumeClaim{}
		Expect(m1.Get(ctx, downKey("m1", claim), down)).To(Succeed())
		Expect(m1.Delete(ctx, down)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).Should(Succeed())
	}

	// letGo lets the claim dropCopyHeld held leave m1, and waits until m1 let it go.
	letGo := func(ctx context.Context, claim *corev1.PersistentVolumeClaim) {
		GinkgoHelper()
		framework.Update(ctx, hub, claim, func() { delete(claim.Annotations, workloadv1alpha1.FinalizersAnnotation("m1")) })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			g.Expect(claim.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		}).WithContext(ctx).Should(Succeed(), "m1 did not let the claim go")
	}

	BeforeAll(func(ctx SpecContext) {
		hub, m1, m2, storage = bed.Hub.Client, bed.Member("m1").Client, bed.Member("m2").Client, bed.Storage("shared")
		rec1, rec2 = recordPhases(bed.Member("m1").Config), recordPhases(bed.Member("m2").Config)
		DeferCleanup(rec1.close)
		DeferCleanup(rec2.close)
		ns = hubNamespace(ctx, "m1")
	})

	AfterAll(func() {
		Expect(rec1.lostClaims()).To(BeEmpty(), "claims went Lost in m1")
		Expect(rec2.lostClaims()).To(BeEmpty(), "claims went Lost in m2")
		if memberPV != nil {
			Expect(rec1.volumePhases(memberPV.Name)).NotTo(ContainElements(corev1.VolumeReleased, corev1.VolumeFailed),
				"m1's own PV left Bound")
		}
		Expect(storage.CheckSingleOwner()).To(Succeed())
		Expect(storage.CheckReleases()).To(Succeed())
	})

	It("upsyncs the PV that member 1 provisions and binds for a synced claim", func(ctx SpecContext) {
		claim = claimFor(ns, "data", corev1.ReadWriteMany, "m1")
		Expect(hub.Create(ctx, claim)).To(Succeed())

		By("letting member 1's storage provision it and its binder bind it")
		down := boundClaim(ctx, m1, downKey("m1", claim))
		memberClaimUID = down.UID
		memberPV = &corev1.PersistentVolume{}
		Expect(m1.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, memberPV)).To(Succeed())
		Expect(memberPV.Spec.CSI).NotTo(BeNil())
		Expect(memberPV.Labels).NotTo(HaveKey(transform.TargetLabel), "the syncer does not own what the member provisioned")

		By("syncing the claim's phase and capacity up, leaving its spec alone")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
			g.Expect(claim.Status.Capacity.Storage().String()).To(Equal("1Gi"))
		}).WithContext(ctx).Should(Succeed())
		Expect(claim.Spec.VolumeName).To(BeEmpty())

		By("recording the PV on the hub, named after the hub claim, labelled Upsync")
		hubPVName = workloadv1alpha1.UpsyncedPVName(claim.UID)
		hubPV := &corev1.PersistentVolume{}
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: hubPVName}, hubPV)).To(Succeed())
			g.Expect(hubPV.Status.Phase).To(Equal(corev1.VolumeBound))
		}).WithContext(ctx).Should(Succeed())
		Expect(hubPV.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel("m1"), string(workloadv1alpha1.ResourceStateUpsync)))
		Expect(hubPV.Annotations).To(HaveKeyWithValue(workloadv1alpha1.PVNameAnnotation("m1"), memberPV.Name))
		Expect(hubPV.Annotations).NotTo(HaveKey("pv.kubernetes.io/bound-by-controller"))
		Expect(hubPV.Annotations).NotTo(HaveKey("pv.kubernetes.io/bind-completed"))
		Expect(hubPV.Spec.CSI).To(Equal(memberPV.Spec.CSI))
		Expect(hubPV.Spec.Capacity).To(Equal(memberPV.Spec.Capacity))
		Expect(hubPV.Spec.AccessModes).To(Equal(memberPV.Spec.AccessModes))
		Expect(hubPV.Spec.StorageClassName).To(Equal("shared"))
		Expect(hubPV.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimDelete))
		Expect(hubPV.Spec.ClaimRef).To(Equal(&corev1.ObjectReference{
			APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: "data",
		}), "the hub claimRef names the hub claim, without the member's uid")
		Expect(hubPV.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
	})

	It("takes member 1's PV over in place once coordination switches the hub PV to Sync", func(ctx SpecContext) {
		By("binding the hub claim and PV, keeping the data, switching to Sync, as coordination does")
		framework.Update(ctx, hub, claim, func() { claim.Spec.VolumeName = hubPVName })
		hubPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: hubPVName}}
		framework.Update(ctx, hub, hubPV, func() {
			hubPV.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
			hubPV.Labels[workloadv1alpha1.StateLabel("m1")] = string(workloadv1alpha1.ResourceStateSync)
		})

		pv := &corev1.PersistentVolume{}
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKey{Name: memberPV.Name}, pv)).To(Succeed())
			g.Expect(pv.Labels).To(HaveKeyWithValue(transform.TargetLabel, "m1"))
			g.Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		}).WithContext(ctx).Should(Succeed())
		Expect(pv.UID).To(Equal(memberPV.UID), "the member's PV was recreated")
		Expect(pv.Spec.ClaimRef.UID).To(Equal(memberClaimUID), "the binder's claimRef uid was lost")
		Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
		down := boundClaim(ctx, m1, downKey("m1", claim))
		Expect(down.UID).To(Equal(memberClaimUID))
		Expect(down.Spec.VolumeName).To(Equal(memberPV.Name))
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: hubPVName}, hubPV)).To(Succeed())
			g.Expect(hubPV.Finalizers).To(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())

		By("no longer upsyncing: the hub is the source now")
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: hubPVName}, hubPV)).To(Succeed())
			g.Expect(hubPV.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel("m1"), string(workloadv1alpha1.ResourceStateSync)))
			g.Expect(hubPV.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
			g.Expect(m1.Get(ctx, client.ObjectKey{Name: memberPV.Name}, pv)).To(Succeed())
			g.Expect(pv.UID).To(Equal(memberPV.UID))
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
		}).WithContext(ctx).Should(Succeed())
	})

	It("binds the hub's pre-bound PV and claim in member 2, with member 2's own claimRef", func(ctx SpecContext) {
		By("syncing the namespace, the claim and the PV to member 2 as well, as coordination does for a shared volume")
		hubNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		framework.Update(ctx, hub, hubNS, func() { hubNS.Labels = synced(hubNS.Labels, "m2") })
		framework.Update(ctx, hub, claim, func() { claim.Labels = synced(claim.Labels, "m2") })
		hubPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: hubPVName}}
		framework.Update(ctx, hub, hubPV, func() { hubPV.Labels = synced(hubPV.Labels, "m2") })

		By("reporting the hub claim's status from member 1 alone, while member 2 binds")
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(claim), claim)).To(Succeed())
			g.Expect(claim.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).Should(Succeed())

		down := boundClaim(ctx, m2, downKey("m2", claim))
		Expect(down.Spec.VolumeName).To(Equal(targetOf("m2").PVName(hubPVName, nil)))
		pv := &corev1.PersistentVolume{}
		Expect(m2.Get(ctx, client.ObjectKey{Name: down.Spec.VolumeName}, pv)).To(Succeed())
		Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
		Expect(pv.Spec.ClaimRef.Namespace).To(Equal(targetOf("m2").Namespace(ns)))
		Expect(pv.Spec.ClaimRef.UID).To(Equal(down.UID), "member 2's binder owns the claimRef uid")
		Expect(pv.Spec.CSI.VolumeHandle).To(Equal(memberPV.Spec.CSI.VolumeHandle))
		Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		Eventually(func() []string {
			v, _ := storage.Volume(memberPV.Spec.CSI.VolumeHandle)
			return v.Holders
		}).WithContext(ctx).Should(Equal([]string{"m1", "m2"}))
	})

	It("binds a pair pre-bound on the hub without carrying the hub's binding fields across", func(ctx SpecContext) {
		static := claimFor(ns, "static", corev1.ReadWriteOnce, "m2")
		static.Spec.VolumeName = "static-volume"
		// Binding fields as a cluster's binder would leave them: none of them may reach m2.
		static.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes"}
		hubPV := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{
				Name: "static-volume", Labels: synced(nil, "m2"),
				Annotations: map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"},
			},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              "shared",
				ClaimRef: &corev1.ObjectReference{
					APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: ns, Name: "static",
					UID: "0b1e7a5e-0000-4000-8000-000000000000", ResourceVersion: "1",
				},
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: storage.Provisioner(), VolumeHandle: "shared-static",
				}},
			},
		}
		Expect(hub.Create(ctx, hubPV)).To(Succeed())
		Expect(hub.Create(ctx, static)).To(Succeed())

		down := boundClaim(ctx, m2, downKey("m2", static))
		pv := &corev1.PersistentVolume{}
		Expect(m2.Get(ctx, client.ObjectKey{Name: targetOf("m2").PVName("static-volume", nil)}, pv)).To(Succeed())
		Expect(down.Spec.VolumeName).To(Equal(pv.Name))
		Expect(pv.Spec.ClaimRef.UID).To(Equal(down.UID))
		Expect(pv.Status.Phase).To(Equal(corev1.VolumeBound))
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(static), static)).To(Succeed())
			g.Expect(static.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(m2.Get(ctx, client.ObjectKeyFromObject(down), down)).To(Succeed())
			g.Expect(down.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).Should(Succeed())
	})

	It("removes the shared volume from member 2 through the deletion flow and keeps its data", func(ctx SpecContext) {
		removal := time.Now().UTC().Format(time.RFC3339)
		hubPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: hubPVName}}
		for _, obj := range []client.Object{claim, hubPV} {
			framework.Update(ctx, hub, obj, func() {
				a := obj.GetAnnotations()
				if a == nil {
					a = map[string]string{}
				}
				a[workloadv1alpha1.DeletionAnnotation("m2")] = removal
				obj.SetAnnotations(a)
			})
		}
		m2PV := client.ObjectKey{Name: targetOf("m2").PVName(hubPVName, nil)}
		Eventually(framework.Deleted(ctx, m2, downKey("m2", claim), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())
		Eventually(framework.Deleted(ctx, m2, m2PV, &corev1.PersistentVolume{})).WithContext(ctx).Should(Succeed())
		for _, obj := range []client.Object{claim, hubPV} {
			Eventually(func(g Gomega) {
				g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
				g.Expect(obj.GetLabels()).NotTo(HaveKey(workloadv1alpha1.StateLabel("m2")))
				g.Expect(obj.GetLabels()).To(HaveKey(workloadv1alpha1.StateLabel("m1")))
			}).WithContext(ctx).Should(Succeed())
		}
		Eventually(func() []string {
			v, _ := storage.Volume(memberPV.Spec.CSI.VolumeHandle)
			return v.Holders
		}).WithContext(ctx).Should(Equal([]string{"m1"}))
		v, _ := storage.Volume(memberPV.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).To(BeZero(), "the Retain policy kept the data")
		boundClaim(ctx, m1, downKey("m1", claim))
	})

	It("deletes a claim that was never switched to Sync, its volume and its upsynced record", func(ctx SpecContext) {
		scratch, pv, upsyncedPV := provisionedInM1(ctx, "scratch")
		upsynced := client.ObjectKeyFromObject(upsyncedPV)

		By("letting the claim go with reclaim policy Delete, as coordination does for a deleted claim")
		patch := client.MergeFrom(scratch.DeepCopy())
		metav1.SetMetaDataAnnotation(&scratch.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(corev1.PersistentVolumeReclaimDelete))
		Expect(hub.Patch(ctx, scratch, patch)).To(Succeed())
		Expect(hub.Delete(ctx, scratch)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(scratch), scratch)).To(Succeed())
			g.Expect(scratch.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
			g.Expect(scratch.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		}).WithContext(ctx).Should(Succeed())
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(framework.Deleted(ctx, hub, upsynced, &corev1.PersistentVolume{})).WithContext(ctx).Should(Succeed())
		v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).NotTo(BeZero())
		Expect(v.Releases).To(Equal(1))
	})

	It("lets go of an upsynced PV that coordination asks to leave, keeping the storage and the hub record", func(ctx SpecContext) {
		kept, pv, upsynced := provisionedInM1(ctx, "kept")

		By("letting the claim go with Retain while the PV is still upsynced, as coordination does for an owner that cannot release")
		patch := client.MergeFrom(kept.DeepCopy())
		metav1.SetMetaDataAnnotation(&kept.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(corev1.PersistentVolumeReclaimRetain))
		Expect(hub.Patch(ctx, kept, patch)).To(Succeed())
		Expect(hub.Delete(ctx, kept)).To(Succeed())
		Eventually(framework.Deleted(ctx, m1, downKey("m1", kept), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())

		By("asking the upsynced PV to leave the target")
		framework.Update(ctx, hub, upsynced, func() {
			metav1.SetMetaDataAnnotation(&upsynced.ObjectMeta, workloadv1alpha1.DeletionAnnotation("m1"), time.Now().UTC().Format(time.RFC3339))
		})
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), upsynced)).To(Succeed(), "the hub PV is the record of the storage kept")
			g.Expect(upsynced.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		}).WithContext(ctx).Should(Succeed())
		v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).To(BeZero(), "Retain kept the storage")
		Expect(v.Releases).To(BeZero())
	})

	It("keeps the storage the hub recorded when member 1 deletes the claim's copy itself, as deleting its namespace does", func(ctx SpecContext) {
		cascaded, pv, upsynced := provisionedInM1(ctx, "cascaded")
		Expect(upsynced.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimDelete), "the hub records the policy m1 provisioned the PV with")
		Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
		Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain), "m1's PV was recorded on the hub before it was kept")
		Expect(pv.Annotations).To(HaveKeyWithValue(transform.ProvisionedPolicyAnnotation, string(corev1.PersistentVolumeReclaimDelete)))

		By("asking the claim to leave m1, held as coordination holds it, as when its namespace leaves m1, and deleting its copy in m1 behind the syncer, as deleting that namespace does")
		dropCopyHeld(ctx, cascaded, pv)
		Consistently(func(g Gomega) {
			v, found := storage.Volume(pv.Spec.CSI.VolumeHandle)
			g.Expect(found).To(BeTrue())
			g.Expect(v.Deleted).To(BeZero(), "m1 released storage the hub recorded")
		}).WithContext(ctx).WithTimeout(3 * time.Second).Should(Succeed())

		By("letting the claim and then the hub PV leave m1: m1 removes its PV, keeping the storage")
		letGo(ctx, cascaded)
		framework.Update(ctx, hub, upsynced, func() {
			metav1.SetMetaDataAnnotation(&upsynced.ObjectMeta, workloadv1alpha1.DeletionAnnotation("m1"), time.Now().UTC().Format(time.RFC3339))
		})
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), upsynced)).To(Succeed(), "the hub PV is the record of the storage kept")
		v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).To(BeZero(), "the storage was released")
		Expect(v.Releases).To(BeZero())
	})

	It("keeps the reclaim policy a user set on an upsynced PV while it follows member 1's", func(ctx SpecContext) {
		_, pv, upsynced := provisionedInM1(ctx, "kept-by-user")
		framework.Update(ctx, hub, upsynced, func() { upsynced.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain })

		By("changing m1's PV, which the hub PV follows while it is upsynced")
		framework.Update(ctx, m1, pv, func() { metav1.SetMetaDataLabel(&pv.ObjectMeta, "e2e.custody.dev/tier", "gold") })
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), upsynced)).To(Succeed())
			g.Expect(upsynced.Labels).To(HaveKeyWithValue("e2e.custody.dev/tier", "gold"))
		}).WithContext(ctx).Should(Succeed())
		Expect(upsynced.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain), "the upsync undid the user's policy")
	})

	It("reports the PV member 1 provisioned as held once the hub takes it away on a Fence, and removes it keeping the storage", func(ctx SpecContext) {
		taken, pv, upsynced := provisionedInM1(ctx, "taken")
		Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
		Expect(pv.Annotations).To(HaveKeyWithValue(transform.HubNameAnnotation, upsynced.Name), "the member's PV is not marked as upsynced")
		Eventually(cleanOf(ctx, "m1")).WithContext(ctx).Should(Equal(metav1.ConditionTrue), "a volume the hub gives m1 counts as held")

		By("keeping m1's PV from going, so that the report can be seen")
		const keep = "e2e.custody.dev/keep"
		framework.Update(ctx, m1, pv, func() { pv.Finalizers = append(pv.Finalizers, keep) })

		By("taking the claim and the hub PV from m1 without its syncer, as coordination does on a Fence")
		for _, obj := range []client.Object{taken, upsynced} {
			framework.Update(ctx, hub, obj, func() {
				workloadv1alpha1.Release(obj, "m1")
				controllerutil.RemoveFinalizer(obj, workloadv1alpha1.SyncerFinalizer("m1"))
			})
		}
		Eventually(framework.Deleted(ctx, m1, downKey("m1", taken), &corev1.PersistentVolumeClaim{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
			g.Expect(pv.DeletionTimestamp).NotTo(BeNil(), "m1's PV is not being removed")
			g.Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		}).WithContext(ctx).Should(Succeed())
		Eventually(cleanOf(ctx, "m1")).WithContext(ctx).Should(Equal(metav1.ConditionFalse), "m1 reports clean while it still has the PV")
		Consistently(cleanOf(ctx, "m1")).WithContext(ctx).WithTimeout(3 * heartbeatPeriod).Should(Equal(metav1.ConditionFalse))

		framework.Update(ctx, m1, pv, func() { controllerutil.RemoveFinalizer(pv, keep) })
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(cleanOf(ctx, "m1")).WithContext(ctx).Should(Equal(metav1.ConditionTrue))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), upsynced)).To(Succeed(), "the hub PV is the record of the storage kept")
		v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).To(BeZero(), "the storage was released")
		Expect(v.Releases).To(BeZero())
	})

	It("removes, keeping the storage, the PV member 1 provisioned whose hub record is gone once the claim leaves after its copy", func(ctx SpecContext) {
		left, pv, upsynced := provisionedInM1(ctx, "left")
		Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
		Expect(pv.Annotations).To(HaveKeyWithValue(transform.HubNameAnnotation, upsynced.Name))

		By("taking the hub PV from m1: m1 keeps its PV while the claim is m1's")
		framework.Update(ctx, hub, upsynced, func() {
			workloadv1alpha1.Release(upsynced, "m1")
			upsynced.Finalizers = nil
		})
		By("asking the claim to leave m1, held as coordination holds it, and deleting its copy, Retain as the upsync made its PV, before the hub lets it go")
		dropCopyHeld(ctx, left, pv)
		By("deleting the hub PV, which the upsync no longer makes again without the copy: as if the hub had never recorded it")
		Expect(hub.Delete(ctx, upsynced)).To(Succeed())
		Eventually(framework.Deleted(ctx, hub, client.ObjectKeyFromObject(upsynced), &corev1.PersistentVolume{})).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
			g.Expect(pv.DeletionTimestamp).To(BeNil(), "m1 let its PV go while the hub still gives it the claim")
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), &corev1.PersistentVolume{})).To(MatchError(ContainSubstring("not found")), "the upsync made the hub PV again")
		}).WithContext(ctx).WithTimeout(2 * time.Second).Should(Succeed())
		Eventually(cleanOf(ctx, "m1")).WithContext(ctx).Should(Equal(metav1.ConditionFalse), "a claim the hub takes away counts as held")

		By("letting the claim go: its going is the only news m1 has")
		letGo(ctx, left)
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "m1 kept the PV of a claim it no longer has")
		Eventually(cleanOf(ctx, "m1")).WithContext(ctx).Should(Equal(metav1.ConditionTrue))
		v, found := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(found).To(BeTrue())
		Expect(v.Deleted).To(BeZero(), "the storage was released")
		Expect(v.Releases).To(BeZero())
	})

	It("binds a claim that left member 1 and came back before its PV left to the PV member 1 provisioned for it", func(ctx SpecContext) {
		back, pv, upsynced := provisionedInM1(ctx, "back")
		first := &corev1.PersistentVolumeClaim{}
		Expect(m1.Get(ctx, downKey("m1", back), first)).To(Succeed())

		By("asking the claim to leave m1 keeping its storage, as a move does, while the PV stays")
		framework.Update(ctx, hub, back, func() {
			metav1.SetMetaDataAnnotation(&back.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(corev1.PersistentVolumeReclaimRetain))
			metav1.SetMetaDataAnnotation(&back.ObjectMeta, workloadv1alpha1.DeletionAnnotation("m1"), time.Now().UTC().Format(time.RFC3339))
		})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(back), back)).To(Succeed())
			g.Expect(back.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		}).WithContext(ctx).Should(Succeed(), "m1 did not let the claim go")
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).Should(Succeed())
		Expect(pv.Spec.ClaimRef.UID).To(Equal(first.UID))

		By("bringing the claim back before the PV left, bound on the hub and the PV switched to Sync, as coordination does")
		framework.Update(ctx, hub, back, func() {
			delete(back.Annotations, storagev1alpha1.ReleasePolicyAnnotation)
			back.Spec.VolumeName = upsynced.Name
			back.Labels = synced(back.Labels, "m1")
		})
		framework.Update(ctx, hub, upsynced, func() {
			upsynced.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
			upsynced.Labels[workloadv1alpha1.StateLabel("m1")] = string(workloadv1alpha1.ResourceStateSync)
		})
		returned := time.Now()
		down := &corev1.PersistentVolumeClaim{}
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", back), down)).To(Succeed())
			g.Expect(down.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "the claim's new copy was never bound: its PV still names the old copy")
		GinkgoWriter.Printf("the claim's new copy was bound %s after its return\n", time.Since(returned).Round(time.Millisecond))
		Expect(down.UID).NotTo(Equal(first.UID))
		Expect(down.Spec.VolumeName).To(Equal(pv.Name))
		Expect(m1.Get(ctx, client.ObjectKeyFromObject(pv), pv)).To(Succeed())
		Expect(pv.Spec.ClaimRef.UID).To(Equal(down.UID))
		Eventually(func(g Gomega) {
			v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
			g.Expect(v.Holders).To(Equal([]string{"m1"}))
			g.Expect(v.Deleted).To(BeZero())
			g.Expect(v.Releases).To(BeZero())
		}).WithContext(ctx).Should(Succeed(), "the volume is not attached to m1 alone")
	})

	It("makes a moved claim's copy in member 2 once its PV's is there, bound at once, and releases its storage under Delete when it is deleted", func(ctx SpecContext) {
		moved, pv, upsynced := provisionedInM1(ctx, "moved")
		const keep = "e2e.custody.dev/keep"

		By("binding the hub claim, held as coordination holds it, and taking it and its PV from m1, keeping the storage")
		framework.Update(ctx, hub, moved, func() {
			moved.Spec.VolumeName = upsynced.Name
			moved.Finalizers = append(moved.Finalizers, keep)
		})
		DeferCleanup(func(ctx SpecContext) {
			framework.Update(ctx, hub, moved, func() { controllerutil.RemoveFinalizer(moved, keep) })
		})
		for _, obj := range []client.Object{moved, upsynced} {
			framework.Update(ctx, hub, obj, func() {
				workloadv1alpha1.Release(obj, "m1")
				controllerutil.RemoveFinalizer(obj, workloadv1alpha1.SyncerFinalizer("m1"))
			})
		}
		Eventually(framework.Deleted(ctx, m1, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())

		By("syncing the claim to m2 before its PV: m2 makes no copy of it yet")
		hubNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		framework.Update(ctx, hub, hubNS, func() { hubNS.Labels = synced(hubNS.Labels, "m2") })
		framework.Update(ctx, hub, moved, func() { moved.Labels = synced(moved.Labels, "m2") })
		down := &corev1.PersistentVolumeClaim{}
		Consistently(func() error {
			return m2.Get(ctx, downKey("m2", moved), down)
		}).WithContext(ctx).WithTimeout(2*time.Second).Should(MatchError(ContainSubstring("not found")), "m2 made the claim's copy before its PV's")

		By("giving m2 the PV: the claim's copy follows its PV's, and m2's binder binds it as it comes, not at its next periodic sync")
		framework.Update(ctx, hub, upsynced, func() { upsynced.Labels = synced(upsynced.Labels, "m2") })
		given := time.Now()
		Eventually(func(g Gomega) {
			g.Expect(m2.Get(ctx, downKey("m2", moved), down)).To(Succeed())
			g.Expect(down.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).WithPolling(20 * time.Millisecond).Should(Succeed())
		Expect(time.Since(given)).To(BeNumerically("<", 5*time.Second), "m2's binder runs every 15 s")

		By("deleting the claim with reclaim policy Delete: m2 releases the storage through its copies")
		framework.Update(ctx, hub, moved, func() {
			metav1.SetMetaDataAnnotation(&moved.ObjectMeta, storagev1alpha1.ReleasePolicyAnnotation, string(corev1.PersistentVolumeReclaimDelete))
		})
		Expect(hub.Delete(ctx, moved)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(moved), moved)).To(Succeed())
			g.Expect(moved.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m2")))
		}).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed(), "m2 did not let the claim go")
		m2PV := client.ObjectKey{Name: targetOf("m2").PVName(upsynced.Name, upsynced.Annotations)}
		Eventually(framework.Deleted(ctx, m2, m2PV, &corev1.PersistentVolume{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		v, _ := storage.Volume(pv.Spec.CSI.VolumeHandle)
		Expect(v.Deleted).NotTo(BeZero(), "the storage was not released")
		Expect(v.Releases).To(Equal(1))

		By("letting the hub PV go, as coordination does once the storage was released")
		framework.Update(ctx, hub, upsynced, func() {
			metav1.SetMetaDataAnnotation(&upsynced.ObjectMeta, workloadv1alpha1.DeletionAnnotation("m2"), time.Now().UTC().Format(time.RFC3339))
		})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(upsynced), upsynced)).To(Succeed())
			g.Expect(upsynced.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m2")))
		}).WithContext(ctx).Should(Succeed())
		Expect(hub.Delete(ctx, upsynced)).To(Succeed())
		Consistently(func() error {
			return m2.Get(ctx, m2PV, &corev1.PersistentVolume{})
		}).WithContext(ctx).Should(MatchError(ContainSubstring("not found")), "m2 made the PV of the released storage again")
	})
})

// cleanOf reads the condition by which the target called name reports whether its member
// holds a volume of domain "shared" that the hub does not give it.
func cleanOf(ctx context.Context, name string) func(g Gomega) metav1.ConditionStatus {
	return func(g Gomega) metav1.ConditionStatus {
		st := &workloadv1alpha1.SyncTarget{}
		g.Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: name}, st)).To(Succeed())
		c := meta.FindStatusCondition(st.Status.Conditions, workloadv1alpha1.CleanCondition("shared"))
		g.Expect(c).NotTo(BeNil())
		return c.Status
	}
}
