package manifests

import (
	"context"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// One ordered container: the hub gets config/default, join registers the targets, and
// unjoin removes them. No controller or syncer runs, so nothing lets go of
// what the specs place on a target as its syncer would leave it.
var _ = Describe("kubectl custody unjoin", Ordered, func() {
	const (
		// empty holds nothing; stuck holds the namespace ns, its claim and a ConfigMap.
		empty, stuck = "unjoin-empty", "unjoin-stuck"
		ns           = "unjoin"
	)
	BeforeAll(func(ctx SpecContext) {
		apply(ctx, bed.Hub.Client, render(filepath.Join(root, "config", "default")))
		for _, t := range []string{empty, stuck} {
			r := join(ctx, bed.Hub.Kubeconfig, t, "--storage-domain=zone-a", "-o", filepath.Join(GinkgoT().TempDir(), t+".yaml"))
			Expect(r.code).To(Equal(0), r.errOut)
		}
		placeOn(ctx, stuck, ns)
	})

	It("removes a target that holds nothing, with its identity", func(ctx SpecContext) {
		r := unjoin(ctx, empty)
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(r.out).To(Equal("synctarget.workload.custody.dev/" + empty + " evicting\n" + identityDeleted(empty) + targetDeleted(empty)))
		Expect(r.errOut).To(BeEmpty())
		expectNoIdentity(ctx, empty)
	})

	It("refuses, naming it, a target it removed, or one never joined", func(ctx SpecContext) {
		for _, t := range []string{empty, "never-joined"} {
			r := unjoin(ctx, t)
			Expect(r.code).To(Equal(1))
			Expect(r.out).To(BeEmpty())
			Expect(r.errOut).To(Equal("error: synctarget \"" + t + "\" not found\n"))
		}
	})

	It("deletes what is left of the identity of a SyncTarget deleted by hand", func(ctx SpecContext) {
		const target = "unjoin-deleted"
		r := join(ctx, bed.Hub.Kubeconfig, target, "--storage-domain=zone-a", "-o", filepath.Join(GinkgoT().TempDir(), "member.yaml"))
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(bed.Hub.Client.Delete(ctx, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: target}})).To(Succeed())
		r = unjoin(ctx, target)
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(r.out).To(Equal(identityDeleted(target) + "synctarget.workload.custody.dev/" + target + " not found\n"))
		expectNoIdentity(ctx, target)
	})

	It("refuses a target that still holds a claim after --timeout, naming it, and removes nothing", func(ctx SpecContext) {
		r := unjoin(ctx, stuck, "--timeout=2s")
		Expect(r.code).To(Equal(1))
		Expect(r.out).To(Equal("synctarget.workload.custody.dev/" + stuck + " evicting\n"))
		lines := strings.Split(strings.TrimSuffix(r.errOut, "\n"), "\n")
		Expect(lines).To(HaveLen(2), r.errOut)
		Expect(lines[0]).To(MatchRegexp(`^\[\ds\] waiting for %s to hold nothing: 1 persistentvolumeclaims, 1 configmaps, 1 namespaces; 0 of 3 let go$`, stuck))
		Expect(lines[1]).To(HavePrefix(`error: synctarget "` + stuck + `" still holds claim ` + ns + `/c1 (Bound, WaitingForDetach) and ` +
			`2 other objects (1 configmaps, 1 namespaces) after 2s; nothing was removed and it stays evicting: `))
		Expect(lines[1]).To(ContainSubstring("kubectl custody fence " + stuck + " --powered-off"))

		expectBoundOnHub(ctx, stuck)
		st := &workloadv1alpha1.SyncTarget{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: stuck}, st)).To(Succeed())
		Expect(st.Spec.Evict).To(BeTrue())
		c := &corev1.PersistentVolumeClaim{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1"}, c)).To(Succeed())
		Expect(workloadv1alpha1.Targets(c)).To(ConsistOf(stuck))
	})

	It("prints with --force --dry-run the identity it would delete and what it would release, and keeps both", func(ctx SpecContext) {
		r := unjoin(ctx, stuck, "--force", "--timeout=0", "--dry-run")
		Expect(r.code).To(Equal(0), r.errOut)
		dryRun := func(lines string) string {
			return strings.ReplaceAll(lines, "\n", " (server dry run)\n")
		}
		Expect(r.out).To(Equal("synctarget.workload.custody.dev/" + stuck + " already evicting\n" + dryRun(identityDeleted(stuck)+
			"persistentvolumeclaim/c1 in namespace "+ns+" released\n"+
			"configmap/cm1 in namespace "+ns+" released\n"+
			"namespace/"+ns+" released\n"+
			targetDeleted(stuck))))
		expectBoundOnHub(ctx, stuck)
		c := &corev1.PersistentVolumeClaim{}
		Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c1"}, c)).To(Succeed())
		Expect(workloadv1alpha1.Targets(c)).To(ConsistOf(stuck))
	})

	It("removes it with --force, takes it off what it holds, and says what its member keeps", func(ctx SpecContext) {
		r := unjoin(ctx, stuck, "--force", "--timeout=0", "--yes")
		Expect(r.code).To(Equal(0), r.errOut)
		Expect(r.out).To(Equal("synctarget.workload.custody.dev/" + stuck + " already evicting\n" + identityDeleted(stuck) +
			"persistentvolumeclaim/c1 in namespace " + ns + " released\n" +
			"configmap/cm1 in namespace " + ns + " released\n" +
			"namespace/" + ns + " released\n" +
			targetDeleted(stuck)))
		Expect(r.errOut).To(Equal("Warning: the member of " + stuck + " keeps its copies of the 3 objects released above, " +
			"and the claims and PVs among them are not fenced: stop their workloads in the member before the volumes are used elsewhere\n"))
		expectNoIdentity(ctx, stuck)

		key := workloadv1alpha1.ToSyncTargetKey(stuck)
		for _, obj := range []client.Object{
			&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm1"}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		} {
			Expect(bed.Hub.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			Expect(workloadv1alpha1.Targets(obj)).To(BeEmpty(), "%T %s", obj, obj.GetName())
			Expect(obj.GetFinalizers()).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer(key)), "%T %s", obj, obj.GetName())
			Expect(obj.GetAnnotations()).NotTo(HaveKey(workloadv1alpha1.FinalizersAnnotation(key)), "%T %s", obj, obj.GetName())
			Expect(obj.GetAnnotations()).NotTo(HaveKey(workloadv1alpha1.DeletionAnnotation(key)), "%T %s", obj, obj.GetName())
		}
	})
})

// unjoin runs kubectl custody unjoin in-process against the hub.
func unjoin(ctx context.Context, args ...string) pluginResult {
	return custody(ctx, bed.Hub.Kubeconfig, append([]string{"unjoin"}, args...)...)
}

// identityDeleted is unjoin's report of the deletion of target's identity, the
// ServiceAccount first, so that every token of it is refused.
func identityDeleted(target string) string {
	sa := workloadv1alpha1.SyncerIdentity(target)
	return "serviceaccount/" + sa + " deleted\n" +
		"clusterrolebinding.rbac.authorization.k8s.io/" + sa + " deleted\n" +
		"rolebinding.rbac.authorization.k8s.io/" + sa + "-token deleted\n" +
		"role.rbac.authorization.k8s.io/" + sa + "-token deleted\n"
}

// targetDeleted is unjoin's report of the deletion of target's SyncTarget.
func targetDeleted(target string) string {
	return "synctarget.workload.custody.dev/" + target + " deleted\n"
}

// placeOn places the namespace ns, a claim c1 and a ConfigMap cm1 in it on target, as its
// syncer leaves them: in Sync, with its syncer's finalizer, the claim held by coordination
// and recorded as Bound, waiting for the detach. The target reports that it syncs
// ConfigMaps and Deployments too. All of it goes at the end of the container.
func placeOn(ctx context.Context, target, ns string) {
	GinkgoHelper()
	key := workloadv1alpha1.ToSyncTargetKey(target)
	place := func(obj client.Object) client.Object {
		workloadv1alpha1.SetState(obj, key, workloadv1alpha1.ResourceStateSync)
		controllerutil.AddFinalizer(obj, workloadv1alpha1.SyncerFinalizer(key))
		Expect(bed.Hub.Client.Create(ctx, obj)).To(Succeed(), "%T %s", obj, obj.GetName())
		return obj
	}
	namespace := place(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	c := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	workloadv1alpha1.SetHold(c, key, storagev1alpha1.HoldFinalizer, true)
	claim := place(c)
	place(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cm1"}})
	DeferCleanup(func(ctx SpecContext) {
		// No controller lets go of the hub's claim protection, nor syncer of its finalizer.
		for _, obj := range []client.Object{claim, namespace} {
			Expect(client.IgnoreNotFound(bed.Hub.Client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))))).To(Succeed())
		}
		Expect(client.IgnoreNotFound(bed.Hub.Client.Delete(ctx, namespace))).To(Succeed())
	})

	vo := &storagev1alpha1.VolumeOwnership{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c1"}}
	Expect(bed.Hub.Client.Create(ctx, vo)).To(Succeed())
	vo.Status = storagev1alpha1.VolumeOwnershipStatus{Phase: storagev1alpha1.Bound, Reason: storagev1alpha1.ReasonWaitingForDetach, Owner: key}
	Expect(bed.Hub.Client.Status().Update(ctx, vo)).To(Succeed())

	st := &workloadv1alpha1.SyncTarget{}
	Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: target}, st)).To(Succeed())
	patch := client.MergeFrom(st.DeepCopy())
	st.Status.SyncedResources = []string{"configmaps", "deployments.apps", "namespaces", "persistentvolumeclaims", "persistentvolumes"}
	Expect(bed.Hub.Client.Status().Patch(ctx, st, patch)).To(Succeed())
}
