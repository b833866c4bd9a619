package plugin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
	"github.com/custody-dev/custody/test/testbed"
)

// backupWait bounds each wait of the backup spec, on a hub that was just rebuilt.
const backupWait = 2 * time.Minute

// emptyHubWindow is how long the spec watches the members while their hub is empty.
const emptyHubWindow = 10 * time.Second

// The spec runs a Custody of its own: one Location "loc" of m1 and m2 over storage domain
// "shared", with the controller and a syncer per member. The owner's syncer goes through the
// wipe with a credential the wipe does not revoke (the hub's client certificate): it reads
// the empty hub, whose every object looks deleted to it, and must remove nothing; the
// other's token stops authenticating with the wipe.
var _ = Describe("hub export and import", Ordered, func() {
	const domain = "shared"
	var env *environment.Environment
	BeforeAll(func(ctx context.Context) {
		env = framework.Start(ctx, environment.OneLocation())
	}, NodeTimeout(testbed.StartTimeout))

	It("round-trips a running environment: the members keep everything while the hub is empty, and go on with the restored one", func(ctx context.Context) {
		h, storage := env.Hub.Client, env.Storage(domain)
		id := framework.HubID(ctx, h)
		ns := framework.App(ctx, h, "loc")
		Expect(h.Create(ctx, environment.Claim(ns, "data", domain, corev1.ReadWriteOnce))).To(Succeed())
		Expect(h.Create(ctx, environment.Claim(ns, "files", domain, corev1.ReadWriteMany))).To(Succeed())
		data, files := settled(ctx, h, ns, "data"), settled(ctx, h, ns, "files")
		handles := map[string]string{"data": volumeHandle(ctx, h, data), "files": volumeHandle(ctx, h, files)}
		for i := range 5 {
			Expect(storage.Write(data.Status.Owner, handles["data"], fmt.Sprintf("data %d", i))).To(Succeed())
		}
		Expect(storage.Write(files.Status.Owner, handles["files"], "files 0")).To(Succeed())
		before := hubState(ctx, h, ns)
		down := downstream(ctx, env, id)
		Expect(down).To(And(HaveKey(data.Status.Owner+" claim data"), HaveKey(files.Status.Owner+" claim files")), "the members' copies: %v", down)

		By("exporting the hub")
		dir := GinkgoT().TempDir()
		file := filepath.Join(dir, "hub.yaml")
		start := time.Now()
		r := custodyWith(ctx, env.Hub.Kubeconfig, "hub", "export", "-o", file)
		took := time.Since(start)
		Expect(r.code).To(Equal(0), r.errOut)
		info, err := os.Stat(file)
		Expect(err).NotTo(HaveOccurred())
		Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)))
		AddReportEntry("export", fmt.Sprintf("%d bytes in %s: %s", info.Size(), took.Round(time.Millisecond), r.errOut))

		By("running the owner's syncer with a credential that outlives the hub's state, a client certificate")
		Expect(env.RestartSyncerWith(data.Status.Owner, rest.CopyConfig(env.Hub.Config))).To(Succeed())
		Expect(env.WaitReady(ctx)).To(Succeed())

		By("wiping the hub, its controller stopped, as a hub whose etcd was lost")
		Expect(env.StopController()).To(Succeed())
		Expect(env.WipeHub(ctx)).To(Succeed())
		Expect(framework.HubID(ctx, h)).NotTo(Equal(id))
		Expect(apierrors.IsNotFound(h.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}))).To(BeTrue())
		Consistently(func(g Gomega) {
			g.Expect(downstream(ctx, env, id)).To(Equal(down), "the members' copies changed while the hub was empty")
			expectKept(g, storage, handles)
		}).WithContext(ctx).WithTimeout(emptyHubWindow).WithPolling(time.Second).Should(Succeed())

		By("removing nothing while an import is under way, even from a syncer started meanwhile")
		// What an import's first write leaves: the identity back, marked as being restored.
		underway := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: workloadv1alpha1.HubIdentityConfigMap,
				Annotations: map[string]string{workloadv1alpha1.HubRestoringAnnotation: time.Now().UTC().Format(time.RFC3339)}},
			Data: map[string]string{workloadv1alpha1.HubIdentityKey: id},
		}
		Expect(h.Create(ctx, underway)).To(Succeed())
		Expect(env.RestartSyncerWith(data.Status.Owner, rest.CopyConfig(env.Hub.Config))).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(downstream(ctx, env, id)).To(Equal(down), "the members' copies changed while an import was under way")
			expectKept(g, storage, handles)
		}).WithContext(ctx).WithTimeout(emptyHubWindow).WithPolling(time.Second).Should(Succeed())
		Expect(h.Delete(ctx, underway)).To(Succeed())

		By("refusing a file that is not an export, and an export of another version")
		bad := filepath.Join(dir, "bad.yaml")
		Expect(os.WriteFile(bad, []byte("format: custody.dev/hub-export\nversion: 2\n"), 0o600)).To(Succeed())
		failsWith(custodyWith(ctx, env.Hub.Kubeconfig, "hub", "import", bad, "--credentials-dir", dir),
			bad+": a Custody hub export of format version 2: this kubectl custody reads version 1 only")

		By("importing it into the empty hub")
		credentials := filepath.Join(dir, "members")
		start = time.Now()
		r = custodyWith(ctx, env.Hub.Kubeconfig, "hub", "import", file, "--credentials-dir", credentials)
		Expect(r.code).To(Equal(0), r.errOut)
		AddReportEntry("import", time.Since(start).Round(time.Millisecond).String())
		Expect(r.out).To(HavePrefix("configmap/custody-system/custody-hub-identity created: hub identity " + id + "\n"))
		Expect(r.out).To(ContainSubstring("persistentvolume/" + data.Status.VolumeName + " restored\n"))
		Expect(r.out).To(ContainSubstring("configmap/custody-system/custody-hub-identity: the hub's objects are restored"))
		kept := &corev1.ConfigMap{}
		Expect(h.Get(ctx, client.ObjectKeyFromObject(underway), kept)).To(Succeed())
		Expect(kept.Annotations).NotTo(HaveKey(workloadv1alpha1.HubRestoringAnnotation))

		By("refusing to import it again, into a hub that is no longer empty")
		r = custodyWith(ctx, env.Hub.Kubeconfig, "hub", "import", file, "--credentials-dir", credentials)
		Expect(r.code).To(Equal(1))
		Expect(r.errOut).To(HavePrefix("error: the hub is not empty of Custody objects: it holds "))

		By("refusing the tokens the syncers had: they name ServiceAccount uids of the hub exported")
		other := environment.Other(data.Status.Owner)
		err = framework.Client(env.SyncerHubConfig(other)).Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		Expect(apierrors.IsUnauthorized(err)).To(BeTrue(), "the old token of %s: %v", other, err)

		By("giving each syncer its new credential, then starting the controller")
		for _, m := range env.Members {
			Expect(env.UseMemberManifest(m.Name, filepath.Join(credentials, m.Name+".yaml"))).To(Succeed())
		}
		Expect(env.StartController()).To(Succeed())
		Expect(env.WaitReady(ctx)).To(Succeed())
		Expect(hubState(ctx, h, ns)).To(Equal(before))
		Consistently(func(g Gomega) {
			g.Expect(downstream(ctx, env, id)).To(Equal(down), "the members' copies are not the ones they had")
			expectKept(g, storage, handles)
		}).WithContext(ctx).WithTimeout(5 * time.Second).WithPolling(time.Second).Should(Succeed())
		Expect(storage.Records(handles["data"])).To(HaveLen(5))
		Expect(storage.Records(handles["files"])).To(HaveLen(1))
		Expect(storage.CheckWrites()).To(Succeed())

		By("binding a new claim, and moving the owned one off its cordoned owner")
		Expect(h.Create(ctx, environment.Claim(ns, "after", domain, corev1.ReadWriteOnce))).To(Succeed())
		settled(ctx, h, ns, "after")
		framework.Cordon(ctx, h, data.Status.Owner, true)
		DeferCleanup(framework.Cordon, context.Background(), h, data.Status.Owner, false)
		Eventually(func(g Gomega) {
			vo := &storagev1alpha1.VolumeOwnership{}
			g.Expect(h.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, vo)).To(Succeed())
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
			g.Expect(vo.Status.Owner).To(Equal(other))
		}).WithContext(ctx).WithTimeout(backupWait).Should(Succeed())
		Eventually(func() []string {
			v, _ := storage.Volume(handles["data"])
			return v.Holders
		}).WithContext(ctx).WithTimeout(backupWait).Should(ConsistOf(other))
		Expect(storage.Write(other, handles["data"], "data after the move")).To(Succeed())
		Expect(storage.Records(handles["data"])).To(HaveLen(6))
		expectKept(Default, storage, handles)
		framework.ExpectLedger(storage)
	}, NodeTimeout(10*time.Minute))
})

// settled waits until the claim's volume is settled, and returns its VolumeOwnership.
func settled(ctx context.Context, h client.Client, ns, name string) *storagev1alpha1.VolumeOwnership {
	GinkgoHelper()
	vo := &storagev1alpha1.VolumeOwnership{}
	Eventually(func(g Gomega) {
		g.Expect(h.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, vo)).To(Succeed())
		g.Expect(vo.Status.Settled()).To(BeTrue(), "%s/%s: %s", vo.Status.Phase, vo.Status.Reason, vo.Status.Message)
		g.Expect(vo.Status.VolumeName).NotTo(BeEmpty())
	}).WithContext(ctx).WithTimeout(backupWait).Should(Succeed())
	return vo
}

// volumeHandle is the storage volume behind the claim's hub PV.
func volumeHandle(ctx context.Context, h client.Client, vo *storagev1alpha1.VolumeOwnership) string {
	GinkgoHelper()
	pv := &corev1.PersistentVolume{}
	Expect(h.Get(ctx, client.ObjectKey{Name: vo.Status.VolumeName}, pv)).To(Succeed())
	Expect(pv.Spec.CSI).NotTo(BeNil())
	return pv.Spec.CSI.VolumeHandle
}

// expectKept checks that the storage released none of the volumes.
func expectKept(g Gomega, storage *simstorage.Storage, handles map[string]string) {
	for name, h := range handles {
		v, ok := storage.Volume(h)
		g.Expect(ok).To(BeTrue(), "no volume %s for %s", h, name)
		g.Expect(v.Releases).To(BeZero(), "the volume of %s was released", name)
		g.Expect(v.Deleted.IsZero()).To(BeTrue(), "the volume of %s was deleted", name)
	}
	g.Expect(storage.CheckReleases()).To(Succeed())
}

// hubState is what the spec compares of the hub before the export and after the import:
// the namespace's placement, each claim's volume and phase, each PV's phase and claim, each
// VolumeOwnership's status, each SyncTarget's Ready, and the pair's objects' being there.
func hubState(ctx context.Context, h client.Client, ns string) map[string]string {
	GinkgoHelper()
	state := map[string]string{}
	n := &corev1.Namespace{}
	Expect(h.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
	state["namespace"] = fmt.Sprint(workloadv1alpha1.Targets(n))
	claims := &corev1.PersistentVolumeClaimList{}
	Expect(h.List(ctx, claims, client.InNamespace(ns))).To(Succeed())
	for _, c := range claims.Items {
		state["claim "+c.Name] = fmt.Sprintf("%s %s %v %v", c.Status.Phase, c.Spec.VolumeName, c.Labels, c.Finalizers)
	}
	pvs := &corev1.PersistentVolumeList{}
	Expect(h.List(ctx, pvs)).To(Succeed())
	for _, pv := range pvs.Items {
		ref := pv.Spec.ClaimRef
		claim := &corev1.PersistentVolumeClaim{}
		Expect(h.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, claim)).To(Succeed())
		Expect(ref.UID).To(Or(BeEmpty(), Equal(claim.UID)), "the claimRef of %s names another uid than its claim's", pv.Name)
		state["pv "+pv.Name] = fmt.Sprintf("%s %s/%s %s %v", pv.Status.Phase, ref.Namespace, ref.Name, pv.Spec.PersistentVolumeReclaimPolicy, pv.Labels)
	}
	vos := &storagev1alpha1.VolumeOwnershipList{}
	Expect(h.List(ctx, vos, client.InNamespace(ns))).To(Succeed())
	for _, vo := range vos.Items {
		Expect(metav1.IsControlledBy(&vo, claimNamed(ctx, h, ns, vo.Name))).To(BeTrue(), "%s is not its claim's", vo.Name)
		st := vo.Status
		state["volumeownership "+vo.Name] = fmt.Sprintf("%s %s %s %v %s", st.Phase, st.Owner, st.VolumeName, st.Sharers, st.Class)
	}
	targets := &workloadv1alpha1.SyncTargetList{}
	Expect(h.List(ctx, targets)).To(Succeed())
	for _, t := range targets.Items {
		state["synctarget "+t.Name] = fmt.Sprintf("%v %s %v", t.Spec.StorageDomains, t.Status.Key, meta.IsStatusConditionTrue(t.Status.Conditions, workloadv1alpha1.ConditionReady))
	}
	return state
}

func claimNamed(ctx context.Context, h client.Client, ns, name string) *corev1.PersistentVolumeClaim {
	GinkgoHelper()
	c := &corev1.PersistentVolumeClaim{}
	Expect(h.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, c)).To(Succeed())
	return c
}

// downstream is what the members hold of the hub of identity id: each copy's namespace,
// claims and PVs, by member and name, with its uid and phase, and whether it is being
// deleted.
func downstream(ctx context.Context, env *environment.Environment, id string) map[string]string {
	GinkgoHelper()
	out := map[string]string{}
	for _, m := range env.Members {
		sel := client.MatchingLabels{"workload.custody.dev/hub": id}
		nss := &corev1.NamespaceList{}
		Expect(m.Client.List(ctx, nss, sel)).To(Succeed())
		for _, n := range nss.Items {
			out[m.Name+" namespace "+n.Name] = fmt.Sprintf("%s %s %v", n.UID, n.Status.Phase, n.DeletionTimestamp)
			claims := &corev1.PersistentVolumeClaimList{}
			Expect(m.Client.List(ctx, claims, client.InNamespace(n.Name))).To(Succeed())
			for _, c := range claims.Items {
				out[m.Name+" claim "+c.Name] = fmt.Sprintf("%s %s %s %v", c.UID, c.Status.Phase, c.Spec.VolumeName, c.DeletionTimestamp)
			}
		}
		pvs := &corev1.PersistentVolumeList{}
		Expect(m.Client.List(ctx, pvs)).To(Succeed())
		for _, pv := range pvs.Items {
			out[m.Name+" pv "+pv.Name] = fmt.Sprintf("%s %s %s %v", pv.UID, pv.Status.Phase, pv.Spec.PersistentVolumeReclaimPolicy, pv.DeletionTimestamp)
		}
	}
	return out
}
