package dr

import (
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/test/simstorage"
)

// writer writes records "<member> <prefix> <i>" to a volume as member, one every period,
// until stopped, and keeps those the storage acknowledged.
type writer struct {
	mu    sync.Mutex
	acked []string
	stop  chan struct{}
	done  chan struct{}
}

// startWriting starts a writer after the records already written.
func startWriting(storage *simstorage.Storage, member, handle, prefix string, period time.Duration, written []string) *writer {
	w := &writer{acked: append([]string(nil), written...), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 0; ; i++ {
			select {
			case <-w.stop:
				return
			case <-time.After(period):
			}
			record := fmt.Sprintf("%s %s %d", member, prefix, i)
			if storage.Write(member, handle, record) == nil {
				w.mu.Lock()
				w.acked = append(w.acked, record)
				w.mu.Unlock()
			}
		}
	}()
	return w
}

// Stop stops the writer and returns every record the storage acknowledged, in order.
func (w *writer) Stop() []string {
	close(w.stop)
	<-w.done
	return w.acked
}

var _ = Describe("A LocationPair's drill", func() {
	It("restores the latest replicas into a sandbox at the other Location and starts the workloads there, isolated, while the pair keeps running and replicating undisturbed; ended, it removes what it made and nothing else", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		handle := pv.Spec.CSI.VolumeHandle
		east, west := env.Storage("east"), env.Storage("west")
		m1, m2 := env.Member("m1").Client, env.Member("m2").Client
		Expect(hub.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, StringData: map[string]string{"password": "s3cret"}})).To(Succeed())
		Expect(hub.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"},
			Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": "db"}, Ports: []corev1.ServicePort{{Port: 5432}}}})).To(Succeed())
		db := database(ns)
		db.Spec.Template.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}
		Expect(hub.Create(ctx, db)).To(Succeed())
		Eventually(func() []string { return usersOf(ctx, m1, downNamespace(ctx, "m1", ns), "data") }).WithContext(ctx).ShouldNot(BeEmpty())
		written := write(ctx, east, "m1", handle, "before", 3)
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1m"}, vo)

		By("writing to the primary every 100ms throughout the drill")
		w := startWriting(east, "m1", handle, "during", 100*time.Millisecond, written)
		DeferCleanup(func() {
			select {
			case <-w.done:
			default:
				w.Stop()
			}
		})

		By("drilling with kubectl custody, which follows the drill until it serves")
		code, out, errOut := env.Custody(ctx, "drill", ns, "--timeout", "90s")
		GinkgoWriter.Printf("$ kubectl custody drill %s\n%s%s(exit %d)\n", ns, out, errOut, code)
		Expect(code).To(Equal(0))
		Expect(errOut).NotTo(ContainSubstring("error"))
		sandbox := ns + "-drill"
		Expect(out).To(MatchRegexp(`drill/%s: ready in west, RTO \d+s, data window \d+[ms]\S*; volumes restored 1 of 1; sandboxes: %s in %s`, ns, ns, sandbox))
		d := &schedulingv1alpha1.Drill{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, d)).To(Succeed())
		Expect(d.Status.Phase).To(Equal(schedulingv1alpha1.DrillReady))
		Expect(d.Status.Location).To(Equal("west"))
		// The times are kept to the second, the durations as measured.
		Expect(d.Status.RecoveryTime.Duration).To(BeNumerically("~", d.Status.ReadyTime.Sub(d.Status.StartTime.Time), time.Second))
		Expect(d.Status.DataWindow.Duration).To(BeNumerically("~", d.Status.StartTime.Sub(d.Status.OldestReplicaTime.Time), time.Second))
		GinkgoWriter.Printf("drill RTO %s, data window %s\n", d.Status.RecoveryTime.Duration, d.Status.DataWindow.Duration)

		By("restoring the claim in the sandbox on west from the replica: the acknowledged writes up to it")
		restored := &storagev1alpha1.VolumeOwnership{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: sandbox, Name: "data"}, restored)).To(Succeed())
		Expect(restored.Status.Owner).To(Equal("m2"))
		restoredPV := &corev1.PersistentVolume{}
		Expect(hub.Get(ctx, client.ObjectKey{Name: restored.Status.VolumeName}, restoredPV)).To(Succeed())
		copyHandle := restoredPV.Spec.CSI.VolumeHandle
		records := west.Records(copyHandle)
		w.mu.Lock()
		acked := append([]string(nil), w.acked...)
		w.mu.Unlock()
		Expect(len(records)).To(BeNumerically(">=", len(written)))
		Expect(records).To(Equal(acked[:len(records)]), "the sandbox's volume is not the replica of the acknowledged writes")

		By("running the copy of the workload on m2, isolated, while the original runs on m1")
		Eventually(func() []string { return usersOf(ctx, m2, downNamespace(ctx, "m2", sandbox), "data") }).WithContext(ctx).ShouldNot(BeEmpty())
		Expect(usersOf(ctx, m1, downNamespace(ctx, "m1", ns), "data")).NotTo(BeEmpty())
		policy := &networkingv1.NetworkPolicy{}
		Eventually(func() error {
			return m2.Get(ctx, client.ObjectKey{Namespace: downNamespace(ctx, "m2", sandbox), Name: "drill-isolation"}, policy)
		}).WithContext(ctx).Should(Succeed())
		Expect(policy.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))
		svc := &corev1.Service{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: sandbox, Name: "db"}, svc)).To(Succeed())
		Expect(svc.Spec.Type).To(Equal(corev1.ServiceTypeClusterIP))
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: sandbox, Name: "db"}, &corev1.Secret{})).To(Succeed())

		By("leaving the pair as it was: protecting from east, its volume on m1, replicating on its interval")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
		Expect(pair.Status.ActiveLocation).To(Equal("east"))
		Expect(pair.Status.LastAction).To(BeNil())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Owner).To(Equal("m1"))
		Expect(vo.Status.VolumeName).To(Equal(pv.Name))
		vr := &storagev1alpha1.VolumeReplication{}
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(vr.Status.Source.LastSyncTime.After(d.Status.ReadyTime.Time)).To(BeTrue(), "no sync since the drill was ready")
			g.Expect(vr.Status.Source.Result).To(Equal("Successful"))
		}).WithContext(ctx).WithTimeout(90 * time.Second).Should(Succeed())
		Expect(vr.Spec.Source).To(Equal("m1"))
		Expect(vr.Spec.Destination).To(Equal("m2"))

		By("recording the drill in the pair's history")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.History).To(HaveLen(1))
		}).WithContext(ctx).Should(Succeed())
		h := pair.Status.History[0]
		Expect(h.Mode).To(Equal(schedulingv1alpha1.DrillMode))
		Expect(h.To).To(Equal("west"))
		Expect(h.RecoveryTime.Duration).To(Equal(d.Status.RecoveryTime.Duration))
		Expect(h.RecoveryPoint.Duration).To(Equal(d.Status.DataWindow.Duration))
		Expect(custody(ctx, "history", ns)).To(MatchRegexp(`(?m)\s+Drill\s+east\s+west\s+Declared\s+Completed\s`))
		Eventually(func(g Gomega) {
			g.Expect(metrics(ctx, g)).To(ContainSubstring(`custody_pair_last_recovery_time_seconds{mode="Drill",pair="%s"} %g`, ns, h.RecoveryTime.Seconds()))
		}).WithContext(ctx).Should(Succeed())

		By("ending the drill: its sandbox goes, with the volume restored into it, and nothing else")
		downSandbox := downNamespace(ctx, "m2", sandbox)
		code, out, errOut = env.Custody(ctx, "drill", ns, "--end", "--timeout", "90s")
		GinkgoWriter.Printf("$ kubectl custody drill %s --end\n%s%s(exit %d)\n", ns, out, errOut, code)
		Expect(code).To(Equal(0))
		Expect(out).To(ContainSubstring("drill/%s: ended: its sandboxes are gone", ns))
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Name: sandbox}, &corev1.Namespace{}))).To(BeTrue())
		Eventually(func() bool {
			return apierrors.IsNotFound(m2.Get(ctx, client.ObjectKey{Name: downSandbox}, &corev1.Namespace{}))
		}).WithContext(ctx).Should(BeTrue())
		Eventually(func(g Gomega) {
			v, ok := west.Volume(copyHandle)
			g.Expect(ok).To(BeTrue())
			g.Expect(v.Deleted.IsZero()).To(BeFalse(), "the restored volume was not released")
		}).WithContext(ctx).Should(Succeed())
		acked = w.Stop()
		v, ok := east.Volume(handle)
		Expect(ok).To(BeTrue())
		Expect(v.Deleted.IsZero()).To(BeTrue())
		Expect(east.Records(handle)).To(Equal(acked), "the primary lost acknowledged writes during the drill")
		Expect(east.LostWrites(handle)).To(BeEmpty())
		GinkgoWriter.Printf("%d writes acknowledged through the drill, none lost\n", len(acked)-len(written))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
		Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
		Expect(vr.DeletionTimestamp.IsZero()).To(BeTrue())
	})
})
