package dr

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// custody runs kubectl custody against the hub and returns what it printed; it must succeed.
func custody(ctx context.Context, args ...string) string {
	GinkgoHelper()
	code, out, errOut := env.Custody(ctx, args...)
	GinkgoWriter.Printf("$ kubectl custody %s\n%s%s(exit %d)\n", strings.Join(args, " "), out, errOut, code)
	Expect(errOut).To(BeEmpty())
	Expect(code).To(Equal(0))
	return out
}

// replicated is the Replicated condition of the claim's record, as "<status>/<reason>: <message>".
func replicated(ctx context.Context, g Gomega, ns, claim string) string {
	vo := &storagev1alpha1.VolumeOwnership{}
	g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: claim}, vo)).To(Succeed())
	c := meta.FindStatusCondition(vo.Status.Conditions, storagev1alpha1.ConditionReplicated)
	if c == nil {
		return "none"
	}
	return string(c.Status) + "/" + c.Reason + ": " + c.Message
}

// metrics is what the controller's metrics endpoint serves the metrics reader now.
func metrics(ctx context.Context, g Gomega) string {
	code, body, err := testbed.Scrape(ctx, env.MetricsURL(), metricsToken)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK), body)
	return body
}

var _ = Describe("A LocationPair", func() {
	It("replicates the volumes of the primary's namespaces to the secondary, and records each one's latest replica", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		east := env.Storage("east")
		written := write(ctx, east, "m1", pv.Spec.CSI.VolumeHandle, "before", 3)

		pair := pairOf(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "5m"})

		By("protecting the volume: a replica of it on the secondary, taken after the writes")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(pair.Status.ActiveLocation).To(Equal("east"))
			g.Expect(pair.Status.Phase).To(Equal(schedulingv1alpha1.PairProtecting))
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)).To(BeTrue(), "%v", pair.Status.Conditions)
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionAvailable)).To(BeTrue())
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionPeerReady)).To(BeTrue())
			g.Expect(pair.Status.Volumes).To(Equal(int32(1)))
			g.Expect(pair.Status.ProtectedVolumes).To(Equal(int32(1)))
			g.Expect(pair.Status.OldestLastSyncTime).NotTo(BeNil())
		}).WithContext(ctx).Should(Succeed())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
		Expect(vo.Status.Replica).NotTo(BeNil())
		Expect(vo.Status.Replica.Target).To(Equal("m2"))
		log, ok := env.Storage("west").Snapshot("m2", downNamespace(ctx, "m2", ns), vo.Status.Replica.Snapshot)
		Expect(ok).To(BeTrue(), "the replica %s is not a snapshot west's storage cut in m2", vo.Status.Replica.Snapshot)
		Expect(log).To(Equal(written))

		By("showing the pair and its volume's replica in kubectl custody")
		pairs := custody(ctx, "pairs")
		Expect(pairs).To(MatchRegexp(`(?m)^%s\s+east\s+west\s+east\s+Protecting\s+1/1\s+\S+`, ns))
		described := custody(ctx, "describe", "pair", ns)
		Expect(described).To(ContainSubstring("Protected Volumes:   1/1"))
		Expect(described).To(MatchRegexp(`(?m)^\s+%s/data\s+m1\s+m2\s+\d{4}-\d\d-\d\dT\S+Z\s+\S+\s+.*Successful$`, ns))

		By("exposing the replica's time, the last sync's duration and its result as metrics")
		labels := fmt.Sprintf(`{claim="data",namespace="%s",pair="%s"}`, ns, ns)
		Eventually(func(g Gomega) {
			body := metrics(ctx, g)
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, vr)).To(Succeed())
			taken := dr.ImageTime(vr)
			g.Expect(taken).NotTo(BeNil())
			g.Expect(body).To(ContainSubstring("custody_volume_replica_timestamp_seconds%s %s", labels,
				strconv.FormatFloat(float64(taken.Unix()), 'g', -1, 64)))
			g.Expect(body).To(ContainSubstring("custody_volume_last_sync_duration_seconds" + labels))
			g.Expect(body).To(ContainSubstring("custody_volume_sync_failed%s 0", labels))
		}).WithContext(ctx).Should(Succeed())
		By("exposing the pair's interval, phase and conditions as metrics, for the alerts to compare the replica's age with")
		Eventually(func(g Gomega) {
			body := metrics(ctx, g)
			g.Expect(body).To(ContainSubstring(`custody_pair_replication_interval_seconds{pair="%s"} 300`, ns))
			g.Expect(body).To(ContainSubstring(`custody_pair_phase{pair="%s",phase="Protecting"} 1`, ns))
			g.Expect(body).To(ContainSubstring(`custody_pair_phase{pair="%s",phase="FailedOver"} 0`, ns))
			g.Expect(body).To(ContainSubstring(`custody_pair_condition{condition="DataProtected",pair="%s",reason="Replicated",status="True"} 1`, ns))
		}).WithContext(ctx).Should(Succeed())

		Eventually(func(g Gomega) string { return replicated(ctx, g, ns, "data") }).WithContext(ctx).Should(HavePrefix("True/Replicated: latest replica "))

		By("removing the replication and the pair's key with the pair")
		Expect(hub.Delete(ctx, pair)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, &storagev1alpha1.VolumeReplication{}))).To(BeTrue())
			g.Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: storagev1alpha1.KeyNamespace, Name: "custody-pair-" + ns}, &corev1.Secret{}))).To(BeTrue())
		}).WithContext(ctx).Should(Succeed())
	})

	It("shows a sync that fails on the pair, on the volume's record and in a metric, and retries it until it succeeds", func(ctx SpecContext) {
		ns := app(ctx, "east")
		boundClaim(ctx, ns, "data", "m1")
		env.VolSync().FailSyncs("connection reset by peer")
		DeferCleanup(func() { env.VolSync().FailSyncs("") })
		pair := pairOf(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "5m"})
		failed := fmt.Sprintf(`custody_volume_sync_failed{claim="data",namespace="%s",pair="%s"}`, ns, ns)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			c := meta.FindStatusCondition(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(schedulingv1alpha1.ReasonSyncFailed))
			g.Expect(c.Message).To(Equal(fmt.Sprintf("1 volumes failed their last sync; the first, %s/data: connection reset by peer", ns)))
			g.Expect(replicated(ctx, g, ns, "data")).To(Equal("False/SyncFailed: the last sync from m1 to m2 failed, and is retried: connection reset by peer"))
			g.Expect(metrics(ctx, g)).To(ContainSubstring(failed + " 1"))
		}).WithContext(ctx).Should(Succeed())
		out := custody(ctx, "describe", "volume", ns+"/data")
		Expect(out).To(MatchRegexp(`(?m)^\s+Replicated\s+False\s+SyncFailed\s+the last sync from m1 to m2 failed`))

		By("letting the syncs succeed again: the next try replicates the volume")
		env.VolSync().FailSyncs("")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)).To(BeTrue(), "%v", pair.Status.Conditions)
			g.Expect(replicated(ctx, g, ns, "data")).To(HavePrefix("True/Replicated: latest replica "))
			g.Expect(metrics(ctx, g)).To(ContainSubstring(failed + " 0"))
		}).WithContext(ctx).Should(Succeed())
	})

	It("shows a sync that stalls as a lagging replica on the pair and on the volume's record, until a sync completes", func(ctx SpecContext) {
		ns := app(ctx, "east")
		vo, _ := boundClaim(ctx, ns, "data", "m1")
		pair := protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1m"}, vo)
		last := *vo.Status.Replica
		env.VolSync().SlowSyncs(time.Hour)
		DeferCleanup(func() { env.VolSync().SlowSyncs(0) })

		By("stalling the next sync: two intervals after the latest replica, it lags")
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			c := meta.FindStatusCondition(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(schedulingv1alpha1.ReasonReplicationLagging), c.Message)
			g.Expect(c.Message).To(Equal(fmt.Sprintf("1 of 1 volumes have no replica from the last two intervals, the first %s/data", ns)))
			g.Expect(pair.Status.ProtectedVolumes).To(BeZero())
			g.Expect(pair.Status.OldestLastSyncTime.Time).To(BeTemporally("==", last.Time.Time))
			g.Expect(replicated(ctx, g, ns, "data")).To(Equal(fmt.Sprintf("False/ReplicationLagging: the latest replica, %s on m2, is from %s: older than two intervals (2m0s)",
				last.Snapshot, last.Time.UTC().Format(time.RFC3339))))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		Expect(time.Since(last.Time.Time)).To(BeNumerically(">=", 2*time.Minute), "lagging before two intervals passed")
		sources := &volsyncv1alpha1.ReplicationSourceList{}
		Expect(env.Member("m1").Client.List(ctx, sources, client.InNamespace(downNamespace(ctx, "m1", ns)))).To(Succeed())
		Expect(sources.Items).To(HaveLen(1))
		Expect(meta.IsStatusConditionTrue(sources.Items[0].Status.Conditions, volsyncv1alpha1.ConditionSynchronizing)).To(BeTrue(),
			"the sync under way: %v", sources.Items[0].Status.Conditions)

		By("ending the stall: the sync under way completes, and the volume is protected again")
		env.VolSync().SlowSyncs(0)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)).To(BeTrue(), "%v", pair.Status.Conditions)
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica.Time.After(last.Time.Time)).To(BeTrue())
			g.Expect(replicated(ctx, g, ns, "data")).To(HavePrefix("True/Replicated: latest replica "))
		}).WithContext(ctx).Should(Succeed())
	})

	It("moves a volume's replication with the volume when it moves inside the primary Location", func(ctx SpecContext) {
		restoreCordons()
		ns := app(ctx, "east")
		vo, pv := boundClaim(ctx, ns, "data", "m1")
		east, handle := env.Storage("east"), pv.Spec.CSI.VolumeHandle
		written := write(ctx, east, "m1", handle, "before the move", 3)
		protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "1m"}, vo)

		By("cordoning m1 while m3 takes namespaces: the namespace and its volume move to m3")
		cordonM1(ctx)
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Owner).To(Equal("m3"))
			g.Expect(vo.Status.Phase).To(Equal(storagev1alpha1.Bound))
		}).WithContext(ctx).Should(Succeed())
		written = append(written, write(ctx, east, "m3", handle, "after the move", 3)...)

		By("replicating from m3: a replica holds the writes made on m3, and m1 runs no source any more")
		Eventually(func(g Gomega) {
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(vr.Spec.Source).To(Equal("m3"))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica).NotTo(BeNil())
			log, ok := env.Storage("west").Snapshot("m2", downNamespace(ctx, "m2", ns), vo.Status.Replica.Snapshot)
			g.Expect(ok).To(BeTrue())
			g.Expect(log).To(Equal(written))
			g.Expect(replicated(ctx, g, ns, "data")).To(HavePrefix("True/Replicated: latest replica "))
		}).WithContext(ctx).WithTimeout(3 * time.Minute).Should(Succeed())
		sources := &volsyncv1alpha1.ReplicationSourceList{}
		Expect(env.Member("m1").Client.List(ctx, sources, client.InNamespace(downNamespace(ctx, "m1", ns)))).To(Succeed())
		Expect(sources.Items).To(BeEmpty())
	})

	It("sends a volume's replicas to its new destination at once when its replication moves inside the secondary Location", func(ctx SpecContext) {
		restoreCordons()
		ns := app(ctx, "west")
		// Class west is m2's own: at the primary's peer the same storage is class east.
		vo, pv := bound(ctx, environment.Claim(ns, "data", "west", corev1.ReadWriteOnce), "m2")
		written := write(ctx, env.Storage("west"), "m2", pv.Spec.CSI.VolumeHandle, "before the move", 3)
		// A day apart, no scheduled sync comes while the spec runs.
		protect(ctx, ns, schedulingv1alpha1.LocationPairSpec{Primary: "west", Secondary: "east", ReplicationInterval: "1d",
			StorageClassMap: []schedulingv1alpha1.StorageClassMapping{{Primary: "west", Secondary: "east"}}}, vo)
		Expect(vo.Status.Replica.Target).To(Equal("m1"))
		written = append(written, write(ctx, env.Storage("west"), "m2", pv.Spec.CSI.VolumeHandle, "after the first replica", 2)...)

		By("cordoning m1 while m3 takes replicas: the replication moves to m3, which takes a replica at once rather than a day later")
		cordonM1(ctx)
		Eventually(func(g Gomega) {
			vr := &storagev1alpha1.VolumeReplication{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vr)).To(Succeed())
			g.Expect(vr.Spec.Destination).To(Equal("m3"))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(vo), vo)).To(Succeed())
			g.Expect(vo.Status.Replica.Target).To(Equal("m3"))
			log, ok := env.Storage("east").Snapshot("m3", downNamespace(ctx, "m3", ns), vo.Status.Replica.Snapshot)
			g.Expect(ok).To(BeTrue())
			g.Expect(log).To(Equal(written))
			g.Expect(replicated(ctx, g, ns, "data")).To(HavePrefix("True/Replicated: latest replica "))
		}).WithContext(ctx).Should(Succeed())
	})

	It("does not replicate a volume whose storage class the other Location lacks, and names the class", func(ctx SpecContext) {
		ns := app(ctx, "east")
		// Class east is m1's own, by name: m2 has none of that name.
		bound(ctx, environment.Claim(ns, "pinned", "east", corev1.ReadWriteOnce), "m1")
		boundClaim(ctx, ns, "data", "m1")
		pair := pairOf(ctx, ns, schedulingv1alpha1.LocationPairSpec{ReplicationInterval: "5m"})
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(pair), pair)).To(Succeed())
			c := meta.FindStatusCondition(pair.Status.Conditions, schedulingv1alpha1.ConditionDataProtected)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(schedulingv1alpha1.ReasonStorageClassUnmapped))
			why := "target m2 has no storage class east; map it to a class of Location west in the pair's spec.storageClassMap"
			g.Expect(c.Message).To(Equal(fmt.Sprintf("1 volumes cannot replicate; the first, %s/pinned: %s", ns, why)))
			g.Expect(replicated(ctx, g, ns, "pinned")).To(Equal("False/StorageClassUnmapped: the volume cannot replicate: " + why))
			g.Expect(replicated(ctx, g, ns, "data")).To(HavePrefix("True/Replicated: "), "the claim of the default class replicates")
			g.Expect(pair.Status.Volumes).To(Equal(int32(1)))
		}).WithContext(ctx).Should(Succeed())
		Expect(apierrors.IsNotFound(hub.Get(ctx, client.ObjectKey{Namespace: ns, Name: "pinned"}, &storagev1alpha1.VolumeReplication{}))).To(BeTrue())
	})
})

// restoreCordons uncordons m1 and cordons m3 again after the spec, as the suite has them.
// Called first in a spec, it runs after the spec's namespace went.
func restoreCordons() {
	DeferCleanup(func(ctx context.Context) {
		Expect(environment.Cordon(ctx, hub, "m1", false)).To(Succeed())
		Expect(environment.Cordon(ctx, hub, "m3", true)).To(Succeed())
	})
}

// cordonM1 uncordons m3 and cordons m1, so that m3 takes what m1 no longer may.
func cordonM1(ctx context.Context) {
	GinkgoHelper()
	Expect(environment.Cordon(ctx, hub, "m3", false)).To(Succeed())
	Expect(environment.Cordon(ctx, hub, "m1", true)).To(Succeed())
}
