package security

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/access"
	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
)

var _ = Describe("A member's syncer identity", func() {
	It("reads the namespaced objects of the namespaces placed on its target, and nothing else namespaced", func(ctx SpecContext) {
		ns, user := tenant(ctx, false)
		creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "creds"}, StringData: map[string]string{"password": "s3cret"}}
		Expect(user.Create(ctx, creds)).To(Succeed())
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"a": "b"}}
		Expect(user.Create(ctx, settings)).To(Succeed())

		By("placing nothing: neither syncer reads the namespace")
		for _, m := range []string{"m1", "m2"} {
			expectDenied(syncer(m).Get(ctx, client.ObjectKeyFromObject(creds), &corev1.Secret{}))
		}

		By("placing the namespace, which its target's syncer syncs")
		placed := time.Now()
		place(ctx, ns)
		key := placedOn(ctx, ns)
		member := env.Member(key)
		Eventually(func() error {
			return member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "creds"), &corev1.Secret{})
		}).WithContext(ctx).WithPolling(10 * time.Millisecond).Should(Succeed())
		AddReportEntry("placement to the Secret's copy in the member", time.Since(placed))
		Expect(syncer(key).Get(ctx, client.ObjectKeyFromObject(creds), &corev1.Secret{})).To(Succeed())

		By("the other target's syncer reading it, or anything namespaced beyond its own")
		as := syncer(environment.Other(key))
		expectDenied(as.Get(ctx, client.ObjectKeyFromObject(creds), &corev1.Secret{}))
		expectDenied(as.Get(ctx, client.ObjectKeyFromObject(settings), &corev1.ConfigMap{}))
		for what, list := range map[string]client.ObjectList{
			"Secrets": &corev1.SecretList{}, "ConfigMaps": &corev1.ConfigMapList{},
			"claims": &corev1.PersistentVolumeClaimList{}, "Pods": &corev1.PodList{},
		} {
			By("listing " + what + " in every namespace")
			expectDenied(as.List(ctx, list))
			By("listing " + what + " in custody-system")
			expectDenied(as.List(ctx, list, client.InNamespace("custody-system")))
		}
		By("reading the controller's leader-election Lease")
		expectDenied(as.Get(ctx, client.ObjectKey{Namespace: "custody-system", Name: "custody-controller"}, &coordinationv1.Lease{}))
		By("reading its own heartbeat Lease, which it renews")
		Expect(as.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: environment.Other(key)}, &coordinationv1.Lease{})).To(Succeed())

		By("taking the namespace off the target: the grant goes once the syncer let go")
		Expect(hub.Delete(ctx, framework.Placement(ns, "loc"))).To(Succeed())
		Eventually(func(g Gomega) {
			n := &corev1.Namespace{}
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, n)).To(Succeed())
			g.Expect(workloadv1alpha1.Targets(n)).To(BeEmpty())
			g.Expect(member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "creds"), &corev1.Secret{})).NotTo(Succeed())
		}).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			grants := &rbacv1.RoleBindingList{}
			g.Expect(hub.List(ctx, grants, client.InNamespace(ns), client.HasLabels{access.TargetLabel})).To(Succeed())
			g.Expect(grants.Items).To(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		Eventually(func() error {
			return syncer(key).Get(ctx, client.ObjectKeyFromObject(creds), &corev1.Secret{})
		}).WithContext(ctx).Should(MatchError(ContainSubstring("cannot get resource")))
	})

	It("keeps its grant while a placed namespace is deleted, until the syncer let go of everything in it", func(ctx SpecContext) {
		ns, user := tenant(ctx, true)
		key := placedOn(ctx, ns)
		settings := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}, Data: map[string]string{"a": "b"}}
		Expect(user.Create(ctx, settings)).To(Succeed())
		member := env.Member(key)
		Eventually(func() error {
			return member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "settings"), &corev1.ConfigMap{})
		}).WithContext(ctx).Should(Succeed())

		By("a grant the tenant deletes stays, held by Custody's finalizer")
		grant := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "custody-syncer-" + key}}
		Expect(user.Delete(ctx, grant)).To(Succeed())
		Expect(syncer(key).Get(ctx, client.ObjectKeyFromObject(settings), &corev1.ConfigMap{})).To(Succeed())

		By("deleting the namespace: it goes, with its copies in the member")
		Expect(hub.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})).NotTo(Succeed())
			g.Expect(member.Client.Get(ctx, framework.CopyKey(hubID, key, ns, "settings"), &corev1.ConfigMap{})).NotTo(Succeed())
		}).WithContext(ctx).Should(Succeed())
	})

	It("reads the key Secret of a replication labelled for its target, no other Secret in custody-system, and keeps that grant", func(ctx SpecContext) {
		ns, _ := tenant(ctx, false)
		secret := func(name string) *corev1.Secret {
			return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: storagev1alpha1.KeyNamespace, Name: name}, StringData: map[string]string{"psk.txt": "volsyncrsynctls:" + ns}}
		}
		key, other := secret("custody-pair-"+ns), secret("custody-other-"+ns)
		Expect(hub.Create(ctx, key)).To(Succeed())
		Expect(hub.Create(ctx, other)).To(Succeed())
		vr := &storagev1alpha1.VolumeReplication{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data", Labels: map[string]string{workloadv1alpha1.StateLabel("m1"): string(workloadv1alpha1.ResourceStateSync)}},
			Spec:       storagev1alpha1.VolumeReplicationSpec{Pair: ns, Source: "m1", Destination: "m2", Schedule: "0 0 * * *", KeySecret: key.Name},
		}
		Expect(hub.Create(ctx, vr)).To(Succeed())

		By("granting m1's syncer the key of its replication")
		Eventually(func() error {
			return syncer("m1").Get(ctx, client.ObjectKeyFromObject(key), &corev1.Secret{})
		}).WithContext(ctx).Should(Succeed())
		grant := &rbacv1.RoleBinding{}
		Expect(hub.Get(ctx, client.ObjectKey{Namespace: storagev1alpha1.KeyNamespace, Name: "custody-syncer-m1-keys"}, grant)).To(Succeed())
		By("keeping the grant: no other controller takes it away")
		Consistently(func(g Gomega) {
			g.Expect(syncer("m1").Get(ctx, client.ObjectKeyFromObject(key), &corev1.Secret{})).To(Succeed())
			now := &rbacv1.RoleBinding{}
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(grant), now)).To(Succeed())
			g.Expect(now.UID).To(Equal(grant.UID), "the grant was deleted and made again")
		}).WithContext(ctx).WithPolling(50 * time.Millisecond).Should(Succeed())
		expectDenied(syncer("m1").Get(ctx, client.ObjectKeyFromObject(other), &corev1.Secret{}))
		expectDenied(syncer("m2").Get(ctx, client.ObjectKeyFromObject(key), &corev1.Secret{}))

		By("taking the replication off m1: the grant goes")
		patch := client.MergeFrom(vr.DeepCopy())
		delete(vr.Labels, workloadv1alpha1.StateLabel("m1"))
		Expect(hub.Patch(ctx, vr, patch)).To(Succeed())
		Eventually(func() error {
			return syncer("m1").Get(ctx, client.ObjectKeyFromObject(key), &corev1.Secret{})
		}).WithContext(ctx).Should(MatchError(ContainSubstring("cannot get resource")))
	})
})

var _ = Describe("A member's syncer identity, on the hub's identity", func() {
	It("reads the ConfigMap that keeps a restored hub's identity, and no other ConfigMap of custody-system", func(ctx SpecContext) {
		// The hub's own identity, as an import writes it: the syncers' check finds the hub
		// they started with.
		identity := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: workloadv1alpha1.HubIdentityConfigMap},
			Data: map[string]string{workloadv1alpha1.HubIdentityKey: hubID}}
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.SyncerIdentityNamespace, Name: "custody-other-settings"}, Data: map[string]string{"a": "b"}}
		for _, cm := range []*corev1.ConfigMap{identity, other} {
			Expect(hub.Create(ctx, cm)).To(Succeed())
			DeferCleanup(hub.Delete, cm)
		}
		for _, m := range []string{"m1", "m2"} {
			got := &corev1.ConfigMap{}
			Expect(syncer(m).Get(ctx, client.ObjectKeyFromObject(identity), got)).To(Succeed())
			Expect(got.Data[workloadv1alpha1.HubIdentityKey]).To(Equal(hubID))
			Expect(workloadv1alpha1.ReadHubIdentity(ctx, syncer(m))).To(Equal(hubID))
			expectDenied(syncer(m).Get(ctx, client.ObjectKeyFromObject(other), &corev1.ConfigMap{}))
			expectDenied(syncer(m).List(ctx, &corev1.ConfigMapList{}, client.InNamespace(workloadv1alpha1.SyncerIdentityNamespace)))
			expectDenied(syncer(m).Update(ctx, got))
		}
	})
})
