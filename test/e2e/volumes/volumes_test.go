package volumes

import (
	"context"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("Provisioning", func() {
	It("provisions on one target, upsyncs the PV, binds the hub pair and keeps every copy Retain", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		c := claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		st := vo.Status
		owner := st.Owner
		Expect(owner).To(BeElementOf("m1", "m2"))
		Expect(st.Class).To(Equal(storagev1alpha1.Owned))
		Expect(st.Domain).To(Equal(domain))
		Expect(st.Sharers).To(BeEmpty())
		Expect(st.Reclaim).To(Equal(storagev1alpha1.ReclaimStatus{Original: corev1.PersistentVolumeReclaimDelete, Current: corev1.PersistentVolumeReclaimRetain}))
		var phases []storagev1alpha1.VolumePhase
		for _, t := range st.Transitions {
			phases = append(phases, t.Phase)
		}
		Expect(phases).To(ContainElements(storagev1alpha1.Provisioning, storagev1alpha1.Upsyncing, storagev1alpha1.Bound))
		Expect(meta.IsStatusConditionTrue(st.Conditions, storagev1alpha1.ConditionReady)).To(BeTrue(), "Ready: %v", st.Conditions)
		Expect(meta.IsStatusConditionFalse(st.Conditions, storagev1alpha1.ConditionProgressing)).To(BeTrue(), "Progressing: %v", st.Conditions)

		Expect(hub.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
		Expect(c.Spec.VolumeName).To(Equal(st.VolumeName))
		Expect(c.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel(owner), "Sync"))
		Expect(c.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel(environment.Other(owner))))
		Expect(c.Annotations).To(HaveKeyWithValue(storagev1alpha1.DomainAnnotation, domain))
		Expect(c.Annotations).To(HaveKeyWithValue(workloadv1alpha1.FinalizersAnnotation(owner), storagev1alpha1.HoldFinalizer))
		pv := hubPV(ctx, st.VolumeName)
		Expect(pv.Labels).To(Equal(map[string]string{workloadv1alpha1.StateLabel(owner): "Sync"}))
		Expect(pv.Spec.ClaimRef.Name).To(Equal("data"))

		// The owner's syncer takes the PV its member provisioned over, Retain, once
		// coordination switched the hub PV to Sync: in the same moment as the claim is Bound.
		var down *corev1.PersistentVolume
		Eventually(func() corev1.PersistentVolumeReclaimPolicy {
			down = downPV(ctx, owner, ns, "data")
			return down.Spec.PersistentVolumeReclaimPolicy
		}).WithContext(ctx).Should(Equal(corev1.PersistentVolumeReclaimRetain))
		Expect(down.Spec.CSI.VolumeHandle).To(Equal(pv.Spec.CSI.VolumeHandle))
		holders(ctx, pv.Spec.CSI.VolumeHandle, owner)
	})
})

var _ = Describe("Claims that name no storage class", func() {
	It("provision with the members' default class and move like any other", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		c := claimObject(ns, "plain", corev1.ReadWriteOnce)
		c.Spec.StorageClassName = nil
		Expect(hub.Create(ctx, c)).To(Succeed())
		vo := bound(ctx, ns, "plain")
		owner := vo.Status.Owner
		Expect(vo.Status.Class).To(Equal(storagev1alpha1.Owned))
		Expect(vo.Status.Domain).To(Equal(domain))
		h := handle(ctx, vo.Status.VolumeName)
		holders(ctx, h, owner)

		framework.Cordon(ctx, hub, owner, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, owner, false)
		moved := waitFor(ctx, ns, "plain", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Owner).To(Equal(environment.Other(owner)))
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
		})
		Expect(handle(ctx, moved.Status.VolumeName)).To(Equal(h))
		holders(ctx, h, environment.Other(owner))
	})

	It("says by name that no target has the class a claim asks for", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		c := claimObject(ns, "fast", corev1.ReadWriteOnce)
		c.Spec.StorageClassName = ptr.To("fast")
		Expect(hub.Create(ctx, c)).To(Succeed())
		waitFor(ctx, ns, "fast", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Pending))
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonStorageClassMissing))
			g.Expect(st.Message).To(ContainSubstring(`has storage class "fast"`))
		})
	})
})

var _ = Describe("Shared volumes", func() {
	It("gives a ReadWriteMany volume to two members at once, pre-bound", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc", "other")
		claim(ctx, ns, "shared", corev1.ReadWriteMany)
		vo := waitFor(ctx, ns, "shared", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Sharers).To(HaveLen(1))
		})
		st := vo.Status
		Expect(st.Class).To(Equal(storagev1alpha1.Shared))
		users := append([]string{st.Owner}, st.Sharers...)
		Expect(users).To(ContainElement("m3"))
		h := handle(ctx, st.VolumeName)
		holders(ctx, h, users...)
		for _, k := range users {
			Expect(downPV(ctx, k, ns, "shared").Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		}
	})
})

var _ = Describe("Owned volumes", func() {
	It("moves to the other member when the owner is cordoned: same data, Retain, never held twice, bound at once", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)
		h := handle(ctx, vo.Status.VolumeName)

		framework.Cordon(ctx, hub, from, true)
		cordoned := time.Now()
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		Eventually(func(g Gomega) {
			pvc := &corev1.PersistentVolumeClaim{}
			g.Expect(framework.Member(env.Bed, to).Client.Get(ctx, framework.CopyKey(hubID, to, ns, "data"), pvc)).To(Succeed())
			g.Expect(pvc.Status.Phase).To(Equal(corev1.ClaimBound))
		}).WithContext(ctx).WithPolling(20 * time.Millisecond).Should(Succeed())
		// The members' binders sync every claim every 15 s, Kubernetes' default: a copy made
		// before its PV's would wait for that.
		took := time.Since(cordoned)
		AddReportEntry("from the cordon to Bound on the new owner", took.String())
		Expect(took).To(BeNumerically("<", 5*time.Second), "the new owner bound the claim %s after the cordon", took)
		vo = waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Owner).To(Equal(to))
		})
		reasons := []string{}
		for _, t := range vo.Status.Transitions {
			reasons = append(reasons, string(t.Phase)+"/"+t.Reason)
		}
		Expect(reasons).To(ContainElements("Moving/"+storagev1alpha1.ReasonWaitingForDetach, "Bound/"+storagev1alpha1.ReasonMoved))

		holders(ctx, h, to)
		down := downPV(ctx, to, ns, "data")
		Expect(down.Spec.CSI.VolumeHandle).To(Equal(h), "the new owner uses the same volume")
		Expect(down.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		Expect(volume(h).Releases).To(BeZero())
		Eventually(func() bool {
			err := framework.Member(env.Bed, from).Client.Get(ctx, framework.CopyKey(hubID, from, ns, "data"), &corev1.PersistentVolumeClaim{})
			return apierrors.IsNotFound(err)
		}).WithContext(ctx).Should(BeTrue(), "the old owner's claim is gone")
	})

	It("waits for the member's pvc-protection while a pod still uses the claim", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)
		key := framework.CopyKey(hubID, from, ns, "data")
		m := framework.Member(env.Bed, from)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: "user"},
			Spec: corev1.PodSpec{
				NodeName:   "node-1",
				Containers: []corev1.Container{{Name: "app", Image: "app"}},
				Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
					PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: key.Name},
				}}},
			},
		}
		Expect(m.Client.Create(ctx, pod)).To(Succeed())

		framework.Cordon(ctx, hub, from, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Moving))
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonWaitingForDetach))
		})
		Eventually(func(g Gomega) {
			pvc := &corev1.PersistentVolumeClaim{}
			g.Expect(m.Client.Get(ctx, key, pvc)).To(Succeed())
			g.Expect(pvc.DeletionTimestamp).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			st := ownership(ctx, ns, "data").Status
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Moving))
			g.Expect(st.Owner).To(Equal(from))
			c := &corev1.PersistentVolumeClaim{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, c)).To(Succeed())
			g.Expect(c.Labels[workloadv1alpha1.StateLabel(to)]).NotTo(Equal("Sync"))
		}).WithContext(ctx).Should(Succeed())

		Expect(m.Client.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Owner).To(Equal(to))
		})
	})

	It("refuses to move to a target whose storage class differs, and says so", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)

		By("giving " + to + " a class of the same name with other parameters")
		original := replaceClass(ctx, to, map[string]string{"domain": domain, "tier": "slow"})
		restored := false
		DeferCleanup(func(ctx context.Context) {
			if !restored {
				replaceClass(ctx, to, original)
			}
		})
		Eventually(func(g Gomega) {
			loc := &schedulingv1alpha1.Location{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: "loc"}, loc)).To(Succeed())
			c := meta.FindStatusCondition(loc.Status.Conditions, schedulingv1alpha1.ConditionStorageClassesCompatible)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
			// The class is missing on the target for a moment first, which says so too.
			g.Expect(c.Message).To(And(ContainSubstring(domain), ContainSubstring(to), ContainSubstring("differs in")))
		}).WithContext(ctx).Should(Succeed())

		framework.Cordon(ctx, hub, from, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reason).To(Equal(storagev1alpha1.ReasonStorageClassMismatch))
			g.Expect(st.Message).To(ContainSubstring(to))
		})
		Consistently(func(g Gomega) {
			st := ownership(ctx, ns, "data").Status
			g.Expect(st.Owner).To(Equal(from))
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
		}).WithContext(ctx).Should(Succeed())

		By("moving once the classes agree again")
		replaceClass(ctx, to, original)
		restored = true
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(st.Owner).To(Equal(to))
		})
	})
})

var _ = Describe("Deleting a claim", func() {
	It("releases the storage exactly once, on the owner, after the claim is gone from the hub", func(ctx SpecContext) {
		_, c, vo, h := ownedData(ctx)
		pvName := vo.Status.VolumeName
		Expect(volume(h).Deleted).To(BeZero())

		Expect(hub.Delete(ctx, c)).To(Succeed())
		framework.Gone(ctx, hub, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}})
		framework.Gone(ctx, hub, c)
		Eventually(func() bool { return volume(h).Deleted.IsZero() }).WithContext(ctx).Should(BeFalse())
		Consistently(func() int { return volume(h).Releases }).WithContext(ctx).Should(Equal(1))
	})

	It("releases the storage through the PV that a copy the member let go of left behind: none is kept unrecorded", func(ctx SpecContext) {
		ns, c, vo, h := ownedData(ctx)
		owner, pvName := vo.Status.Owner, vo.Status.VolumeName
		m := framework.Member(env.Bed, owner)

		By("the member deleting the claim's copy, which a finalizer keeps until the hub claim is deleted too")
		copied := &corev1.PersistentVolumeClaim{}
		key := framework.CopyKey(hubID, owner, ns, "data")
		Expect(m.Client.Get(ctx, key, copied)).To(Succeed())
		patch := client.MergeFrom(copied.DeepCopy())
		copied.Finalizers = append(copied.Finalizers, "custody.dev/test-hold")
		Expect(m.Client.Patch(ctx, copied, patch)).To(Succeed())
		Expect(m.Client.Delete(ctx, copied)).To(Succeed())
		let := func(ctx context.Context) {
			if err := m.Client.Get(ctx, key, copied); apierrors.IsNotFound(err) {
				return
			}
			patch := client.MergeFrom(copied.DeepCopy())
			copied.Finalizers = slices.DeleteFunc(copied.Finalizers, func(f string) bool { return f == "custody.dev/test-hold" })
			Expect(client.IgnoreNotFound(m.Client.Patch(ctx, copied, patch))).To(Succeed())
		}
		DeferCleanup(let)

		By("deleting the claim: coordination gives the owner the hub PV's policy, Delete")
		Expect(hub.Delete(ctx, c)).To(Succeed())
		waitFor(ctx, ns, "data", func(g Gomega, st storagev1alpha1.VolumeOwnershipStatus) {
			g.Expect(st.Reclaim.Current).To(Equal(corev1.PersistentVolumeReclaimDelete))
		})
		Expect(downPV(ctx, owner, ns, "data").Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain),
			"the copy goes without the syncer, before it settled the PV")

		By("the copy going, its PV Retain")
		let(ctx)
		framework.Gone(ctx, hub, c)
		Eventually(func(g Gomega) {
			v := volume(h)
			g.Expect(v.Releases).To(Equal(1))
			g.Expect(v.Deleted).NotTo(BeZero())
		}).WithContext(ctx).Should(Succeed(), "the storage is released, not left with no record of it")
		framework.Gone(ctx, hub, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName}})
	})

	It("never releases the storage of a hub PV set to Retain: it stays Released, naming its claim and last owner, until an admin deletes it", func(ctx SpecContext) {
		ns, c, vo, h := ownedData(ctx)
		owner, pvName := vo.Status.Owner, vo.Status.VolumeName
		pv := hubPV(ctx, pvName)
		patch := client.MergeFrom(pv.DeepCopy())
		pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		Expect(hub.Patch(ctx, pv, patch)).To(Succeed())

		By("deleting the claim")
		deleted := time.Now()
		Expect(hub.Delete(ctx, c)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: pvName}, pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		}).WithContext(ctx).Should(Succeed())
		took := time.Since(deleted)
		AddReportEntry("hub PV Released after the claim's deletion", took.Round(time.Millisecond).String())
		framework.Gone(ctx, hub, c)

		Expect(hub.Get(ctx, client.ObjectKey{Name: pvName}, pv)).To(Succeed())
		Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
		Expect(pv.Status.LastPhaseTransitionTime).NotTo(BeNil())
		Expect(pv.Spec.ClaimRef).NotTo(BeNil())
		Expect(pv.Spec.ClaimRef.Namespace + "/" + pv.Spec.ClaimRef.Name).To(Equal(ns + "/data"))
		Expect(pv.Spec.ClaimRef.UID).To(Equal(c.UID))
		Expect(pv.Spec.PersistentVolumeReclaimPolicy).To(Equal(corev1.PersistentVolumeReclaimRetain))
		Expect(pv.Annotations).To(HaveKeyWithValue(storagev1alpha1.LastOwnerAnnotation, owner))
		Expect(pv.Annotations).To(HaveKeyWithValue(storagev1alpha1.DomainAnnotation, domain))
		Expect(pv.Finalizers).To(BeEmpty(), "no finalizer holds an admin's delete")
		Expect(workloadv1alpha1.Targets(pv)).To(BeEmpty())
		Consistently(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: pvName}, pv)).To(Succeed())
			g.Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased))
			g.Expect(volume(h).Releases).To(BeZero())
			g.Expect(volume(h).Deleted).To(BeZero())
		}).WithContext(ctx).Should(Succeed())

		By("an admin deleting the kept hub PV")
		Expect(hub.Delete(ctx, pv)).To(Succeed())
		framework.Gone(ctx, hub, pv)
		Consistently(func(g Gomega) {
			v := volume(h)
			g.Expect(v.Releases).To(BeZero())
			g.Expect(v.Deleted).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
	})

	It("keeps the storage, on record, when the owner it moved to never made its copy: nothing released it", func(ctx SpecContext) {
		ns := framework.App(ctx, hub, "loc")
		c := claim(ctx, ns, "data", corev1.ReadWriteOnce)
		vo := bound(ctx, ns, "data")
		from, to := vo.Status.Owner, environment.Other(vo.Status.Owner)
		pvName := vo.Status.VolumeName
		h := handle(ctx, pvName)

		By("leaving " + to + " an old copy of the namespace that terminates until the spec lets it go")
		stuck := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:       framework.CopyKey(hubID, to, ns, "data").Namespace,
			Labels:     transform.Target{Key: to, Hub: hubID}.Markers(),
			Finalizers: []string{"custody.dev/test-hold"},
		}}
		m := framework.Member(env.Bed, to)
		Expect(m.Client.Create(ctx, stuck)).To(Succeed())
		Expect(m.Client.Delete(ctx, stuck)).To(Succeed())
		DeferCleanup(func(ctx context.Context) {
			Expect(client.IgnoreNotFound(m.Client.Get(ctx, client.ObjectKeyFromObject(stuck), stuck))).To(Succeed())
			patch := client.MergeFrom(stuck.DeepCopy())
			stuck.Finalizers = nil
			Expect(client.IgnoreNotFound(m.Client.Patch(ctx, stuck, patch))).To(Succeed())
		})

		By("moving the claim to " + to + ", which cannot make its copy there")
		framework.Cordon(ctx, hub, from, true)
		DeferCleanup(framework.Cordon, context.Background(), hub, from, false)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(c), c)).To(Succeed())
			g.Expect(c.Labels).To(HaveKeyWithValue(workloadv1alpha1.StateLabel(to), string(workloadv1alpha1.ResourceStateSync)))
			g.Expect(workloadv1alpha1.Targets(c)).To(ConsistOf(to))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func() bool {
			return apierrors.IsNotFound(m.Client.Get(ctx, framework.CopyKey(hubID, to, ns, "data"), &corev1.PersistentVolumeClaim{}))
		}).WithContext(ctx).Should(BeTrue(), "the claim's copy was made in a terminating namespace")

		By("deleting the claim")
		Expect(hub.Delete(ctx, c)).To(Succeed())
		framework.Gone(ctx, hub, c)
		pv := hubPV(ctx, pvName)
		Expect(pv.Status.Phase).To(Equal(corev1.VolumeReleased), "the hub PV names storage that no copy released")
		Expect(pv.Spec.CSI.VolumeHandle).To(Equal(h))
		Consistently(func(g Gomega) {
			v := volume(h)
			g.Expect(v.Releases).To(BeZero())
			g.Expect(v.Deleted).To(BeZero())
		}).WithContext(ctx).Should(Succeed())
		Expect(hub.Delete(ctx, pv)).To(Succeed())
	})
})

// replaceClass replaces the member's StorageClass of the domain (parameters are immutable)
// with one of the given parameters, and returns the parameters it had.
func replaceClass(ctx context.Context, target string, params map[string]string) map[string]string {
	m := framework.Member(env.Bed, target)
	old := &storagev1.StorageClass{}
	Expect(m.Client.Get(ctx, client.ObjectKey{Name: domain}, old)).To(Succeed())
	Expect(m.Client.Delete(ctx, old)).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(m.Client.Get(ctx, client.ObjectKey{Name: domain}, &storagev1.StorageClass{}))
	}).WithContext(ctx).Should(BeTrue())
	Expect(m.Client.Create(ctx, &storagev1.StorageClass{
		ObjectMeta:           metav1.ObjectMeta{Name: domain, Annotations: old.Annotations},
		Provisioner:          old.Provisioner,
		Parameters:           params,
		ReclaimPolicy:        old.ReclaimPolicy,
		VolumeBindingMode:    old.VolumeBindingMode,
		AllowVolumeExpansion: ptr.To(ptr.Deref(old.AllowVolumeExpansion, false)),
	})).To(Succeed())
	return old.Parameters
}
