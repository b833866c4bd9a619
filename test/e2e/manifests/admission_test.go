package manifests

import (
	"context"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/access"
)

// The messages of the rules of config/admission's policy.
const (
	ruleLease      = "custody: a syncer may only write its own Lease, " + workloadv1alpha1.HeartbeatNamespace + "/"
	ruleSyncTarget = "custody: a syncer may only write the status of its own SyncTarget, "
	ruleCreate     = "custody: a syncer may only create PVs and claims labelled Upsync for its own target, and nothing else labelled for it"
	ruleTheirs     = "custody: a syncer may not change another target's state label, finalizers, removal request, PV name or syncer finalizer"
	ruleOwn        = "custody: a syncer may only clear its own state label and removal request, never set them, nor change its target's finalizers"
	rulePlaced     = "custody: a syncer may only change objects placed on its target, and of others only let go of its finalizer"
	ruleStatus     = "custody: a syncer may only write the status of objects placed on its target"
	ruleDelete     = "custody: a syncer may only delete objects labelled Upsync for its own target"
	ruleHubSource  = "custody: a syncer may only hold, let go of and acknowledge the removal of what the hub places on its target, not change its spec, data, labels, annotations or other finalizers"
	ruleDrill      = "custody: the controller only "
	ruleSandbox    = "custody: the controller only creates deployments inside the sandbox of the drill it names"
)

// One ordered container: the hub gets config/default and a token controller, join registers
// the targets a and b, and each spec has a's syncer try b's part of a rule, denied, and its
// own, allowed.
var _ = Describe("The admission policy of config/admission", Ordered, func() {
	const (
		a, b = "policy-a", "policy-b"
		// ns holds the namespaced objects of the specs.
		ns = "admission"
	)
	var syncerA, syncerB client.Client
	BeforeAll(func(ctx SpecContext) {
		apply(ctx, bed.Hub.Client, render(filepath.Join(root, "config", "default")))
		for _, t := range []string{a, b} {
			r := join(ctx, bed.Hub.Kubeconfig, t, "--storage-domain=zone-a", "-o", filepath.Join(GinkgoT().TempDir(), t+".yaml"))
			Expect(r.code).To(Equal(0), r.errOut)
		}
		syncerA, syncerB = clientAs(bed.Hub.Config, workloadv1alpha1.SyncerIdentity(a)), clientAs(bed.Hub.Config, workloadv1alpha1.SyncerIdentity(b))
		Expect(bed.Hub.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		// Both syncers hold in ns what the controller grants in a namespace placed on their
		// target: the policy, not RBAC, is what each spec meets.
		for _, t := range []string{a, b} {
			Expect(bed.Hub.Client.Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "custody-syncer-" + t},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: access.NamespaceRole},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: namespace, Name: workloadv1alpha1.SyncerIdentity(t)}},
			})).To(Succeed())
		}
		// The hub's API server takes the new policy up within moments.
		Eventually(func() error {
			return syncerA.Create(ctx, heartbeat(workloadv1alpha1.HeartbeatNamespace, b), client.DryRunAll)
		}).WithContext(ctx).Should(MatchError(ContainSubstring(ruleLease)))
	})

	It("keeps a syncer to its own Lease", func(ctx SpecContext) {
		theirs := heartbeat(workloadv1alpha1.HeartbeatNamespace, b)
		Expect(syncerB.Create(ctx, theirs)).To(Succeed())
		theirs.Spec.RenewTime = ptr.To(metav1.NowMicro())
		expectDenied(syncerA.Update(ctx, theirs), ruleLease+a)
		// Outside the heartbeat namespace, RBAC refuses it any Lease.
		err := syncerA.Create(ctx, heartbeat(ns, a))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want forbidden, got %v", err)
		Expect(err).To(MatchError(ContainSubstring(`cannot create resource "leases"`)))

		own := heartbeat(workloadv1alpha1.HeartbeatNamespace, a)
		Expect(syncerA.Create(ctx, own)).To(Succeed())
		own.Spec.RenewTime = ptr.To(metav1.NowMicro())
		Expect(syncerA.Update(ctx, own)).To(Succeed())
	})

	It("keeps a syncer to its own SyncTarget's status", func(ctx SpecContext) {
		report := func(target string) error {
			st := &workloadv1alpha1.SyncTarget{}
			Expect(bed.Hub.Client.Get(ctx, client.ObjectKey{Name: target}, st)).To(Succeed())
			patch := client.MergeFrom(st.DeepCopy())
			st.Status.SyncedResources = []string{"persistentvolumeclaims"}
			return syncerA.Status().Patch(ctx, st, patch)
		}
		expectDenied(report(b), ruleSyncTarget+a)
		Expect(report(a)).To(Succeed())
	})

	It("lets a syncer create hub PVs only labelled Upsync for its own target, and delete only those", func(ctx SpecContext) {
		for _, tc := range []struct {
			name   string
			states map[string]workloadv1alpha1.ResourceState
			rule   string
		}{
			{"upsync-for-b", map[string]workloadv1alpha1.ResourceState{b: workloadv1alpha1.ResourceStateUpsync}, ruleCreate},
			{"sync-for-a", map[string]workloadv1alpha1.ResourceState{a: workloadv1alpha1.ResourceStateSync}, ruleCreate},
			{"not-labelled", nil, ruleCreate},
			{"upsync-for-a-and-b", map[string]workloadv1alpha1.ResourceState{a: workloadv1alpha1.ResourceStateUpsync, b: workloadv1alpha1.ResourceStateUpsync}, ruleTheirs},
		} {
			expectDenied(syncerA.Create(ctx, volume(tc.name, tc.states)), tc.rule)
		}
		own := volume("upsync-for-a", map[string]workloadv1alpha1.ResourceState{a: workloadv1alpha1.ResourceStateUpsync})
		Expect(syncerA.Create(ctx, own)).To(Succeed())

		theirs := volume("upsynced-by-b", map[string]workloadv1alpha1.ResourceState{b: workloadv1alpha1.ResourceStateUpsync})
		Expect(syncerB.Create(ctx, theirs)).To(Succeed())
		expectDenied(syncerA.Delete(ctx, theirs), ruleDelete)
		Expect(syncerA.Delete(ctx, own)).To(Succeed())
	})

	It("keeps a syncer off another target's state label, finalizers, removal request and syncer finalizer", func(ctx SpecContext) {
		obj := configMap(ctx, ns, "on-a-and-b", func(o *corev1.ConfigMap) {
			workloadv1alpha1.SetState(o, a, workloadv1alpha1.ResourceStateSync)
			workloadv1alpha1.SetState(o, b, workloadv1alpha1.ResourceStateSync)
			workloadv1alpha1.SetHold(o, b, "coordination", true)
			workloadv1alpha1.RequestRemoval(o, b, time.Now())
			controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer(b))
		})
		for what, change := range map[string]func(*corev1.ConfigMap){
			"release b":             func(o *corev1.ConfigMap) { workloadv1alpha1.Release(o, b) },
			"set b's state":         func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, b, workloadv1alpha1.ResourceStateUpsync) },
			"let go of b's hold":    func(o *corev1.ConfigMap) { workloadv1alpha1.SetHold(o, b, "coordination", false) },
			"cancel b's removal":    func(o *corev1.ConfigMap) { workloadv1alpha1.CancelRemoval(o, b) },
			"remove b's finalizer":  func(o *corev1.ConfigMap) { controllerutil.RemoveFinalizer(o, workloadv1alpha1.SyncerFinalizer(b)) },
			"place the object on c": func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, "c", workloadv1alpha1.ResourceStatePending) },
			"name b's PV": func(o *corev1.ConfigMap) {
				metav1.SetMetaDataAnnotation(&o.ObjectMeta, workloadv1alpha1.PVNameAnnotation(b), "pv")
			},
			"hold it for c":              func(o *corev1.ConfigMap) { controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer("c")) },
			"request the removal from b": func(o *corev1.ConfigMap) { workloadv1alpha1.RequestRemoval(o, b, time.Now().Add(time.Hour)) },
		} {
			By(what)
			expectDenied(patchAs(ctx, syncerA, obj, change), ruleTheirs)
		}

		Expect(patchAs(ctx, syncerA, obj, func(o *corev1.ConfigMap) {
			controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer(a))
		})).To(Succeed(), "holding the object")
		Expect(patchAs(ctx, syncerA, obj, func(o *corev1.ConfigMap) {
			controllerutil.RemoveFinalizer(o, workloadv1alpha1.SyncerFinalizer(a))
			workloadv1alpha1.Release(o, a)
		})).To(Succeed(), "releasing the object")
	})

	It("lets a syncer only clear its own state label and removal request", func(ctx SpecContext) {
		onB := configMap(ctx, ns, "on-b", func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, b, workloadv1alpha1.ResourceStateSync) })
		expectDenied(patchAs(ctx, syncerA, onB, func(o *corev1.ConfigMap) {
			workloadv1alpha1.SetState(o, a, workloadv1alpha1.ResourceStateSync)
		}), ruleOwn)

		onA := configMap(ctx, ns, "pending-on-a", func(o *corev1.ConfigMap) {
			workloadv1alpha1.SetState(o, a, workloadv1alpha1.ResourceStatePending)
			workloadv1alpha1.SetHold(o, a, "coordination", true)
			workloadv1alpha1.RequestRemoval(o, a, time.Now())
		})
		for what, change := range map[string]func(*corev1.ConfigMap){
			"set its state":            func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, a, workloadv1alpha1.ResourceStateSync) },
			"let go of its hold":       func(o *corev1.ConfigMap) { workloadv1alpha1.SetHold(o, a, "coordination", false) },
			"request its removal anew": func(o *corev1.ConfigMap) { workloadv1alpha1.RequestRemoval(o, a, time.Now().Add(time.Hour)) },
		} {
			By(what)
			expectDenied(patchAs(ctx, syncerA, onA, change), ruleOwn)
		}
		Expect(patchAs(ctx, syncerA, onA, func(o *corev1.ConfigMap) { workloadv1alpha1.CancelRemoval(o, a) })).To(Succeed())
		Expect(patchAs(ctx, syncerA, onA, func(o *corev1.ConfigMap) { workloadv1alpha1.Release(o, a) })).To(Succeed())
	})

	It("lets a syncer change only objects placed on its target, only to hold them, and of others only let go of its finalizer", func(ctx SpecContext) {
		onB := configMap(ctx, ns, "held-on-b", func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, b, workloadv1alpha1.ResourceStateSync) })
		for what, change := range map[string]func(*corev1.ConfigMap){
			"hold it":         func(o *corev1.ConfigMap) { controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer(a)) },
			"change its data": func(o *corev1.ConfigMap) { o.Data = map[string]string{"k": "v"} },
		} {
			By(what)
			expectDenied(patchAs(ctx, syncerA, onB, change), rulePlaced)
		}

		onA := configMap(ctx, ns, "held-on-a", func(o *corev1.ConfigMap) { workloadv1alpha1.SetState(o, a, workloadv1alpha1.ResourceStateSync) })
		expectDenied(patchAs(ctx, syncerA, onA, func(o *corev1.ConfigMap) { o.Data = map[string]string{"k": "v"} }), ruleHubSource)
		Expect(patchAs(ctx, syncerA, onA, func(o *corev1.ConfigMap) {
			controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer(a))
		})).To(Succeed(), "holding an object placed on its target")
		left := configMap(ctx, ns, "left-a", func(o *corev1.ConfigMap) { controllerutil.AddFinalizer(o, workloadv1alpha1.SyncerFinalizer(a)) })
		Expect(patchAs(ctx, syncerA, left, func(o *corev1.ConfigMap) {
			controllerutil.RemoveFinalizer(o, workloadv1alpha1.SyncerFinalizer(a))
		})).To(Succeed())
	})

	It("lets a syncer write the status only of objects placed on its target", func(ctx SpecContext) {
		report := func(target string) error {
			claim := &corev1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "on-" + target},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}
			workloadv1alpha1.SetState(claim, target, workloadv1alpha1.ResourceStateSync)
			Expect(bed.Hub.Client.Create(ctx, claim)).To(Succeed())
			patch := client.MergeFrom(claim.DeepCopy())
			claim.Status.Phase = corev1.ClaimBound
			return syncerA.Status().Patch(ctx, claim, patch)
		}
		expectDenied(report(b), ruleStatus)
		Expect(report(a)).To(Succeed())
	})

	It("lets only a Fence's executor report how the Fence stands: a member is trusted with its storage domain's fencing, not with another's", func(ctx SpecContext) {
		fence := &storagev1alpha1.Fence{
			ObjectMeta: metav1.ObjectMeta{Name: "lost.zone-a"},
			Spec:       storagev1alpha1.FenceSpec{TargetName: "lost", Domain: "zone-a"},
		}
		workloadv1alpha1.SetState(fence, b, workloadv1alpha1.ResourceStateSync)
		Expect(bed.Hub.Client.Create(ctx, fence)).To(Succeed())
		report := func(c client.Client) error {
			f := &storagev1alpha1.Fence{}
			Expect(bed.Hub.Client.Get(ctx, client.ObjectKeyFromObject(fence), f)).To(Succeed())
			patch := client.MergeFrom(f.DeepCopy())
			f.Status.Phase = storagev1alpha1.FenceFenced
			return c.Status().Patch(ctx, f, patch)
		}
		expectDenied(report(syncerA), ruleStatus)
		Expect(report(syncerB)).To(Succeed(), "the executor reports")
	})

	It("lets the controller make and remove namespaces, their objects and Placements only as a drill's sandboxes", func(ctx SpecContext) {
		controller := clientAs(bed.Hub.Config, controllerSA)
		drill := func(name string) map[string]string {
			return map[string]string{schedulingv1alpha1.DrillLabel: name}
		}
		namespaceOf := func(name string, labels map[string]string) *corev1.Namespace {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		}
		deployment := func(namespace string, labels map[string]string) *appsv1.Deployment {
			return &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "app", Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "app"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "app"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app"}}},
					},
				},
			}
		}
		placement := func(name string, labels map[string]string) *schedulingv1alpha1.Placement {
			return &schedulingv1alpha1.Placement{
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
				Spec:       schedulingv1alpha1.PlacementSpec{LocationName: "east", NamespaceSelector: metav1.LabelSelector{MatchLabels: drill("d1")}},
			}
		}

		By("creating only a drill's namespace and Placement")
		expectDenied(controller.Create(ctx, namespaceOf("not-a-sandbox", nil), client.DryRunAll), ruleDrill+"creates namespaces of a drill")
		expectDenied(controller.Create(ctx, placement("not-a-drill", nil), client.DryRunAll), ruleDrill+"creates placements of a drill")
		sandbox := namespaceOf("sandbox-d1", drill("d1"))
		Expect(controller.Create(ctx, sandbox)).To(Succeed())
		Expect(controller.Create(ctx, placement("drill-d1", drill("d1")), client.DryRunAll)).To(Succeed())

		By("creating workloads only in the sandbox of the drill they name")
		expectDenied(controller.Create(ctx, deployment(ns, nil), client.DryRunAll), ruleDrill+"creates deployments of a drill")
		expectDenied(controller.Create(ctx, deployment(ns, drill("d1")), client.DryRunAll), ruleSandbox)
		expectDenied(controller.Create(ctx, deployment(sandbox.Name, drill("d2")), client.DryRunAll), ruleSandbox)
		Expect(controller.Create(ctx, deployment(sandbox.Name, drill("d1")), client.DryRunAll)).To(Succeed())

		By("creating the VolSync keys in its own namespace, outside any drill")
		key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "volsync-key-probe"}}
		Expect(controller.Create(ctx, key, client.DryRunAll)).To(Succeed())

		By("deleting only a drill's namespace and Placement")
		Expect(bed.Hub.Client.Create(ctx, placement("not-a-drill", nil))).To(Succeed())
		expectDenied(controller.Delete(ctx, placement("not-a-drill", nil)), ruleDrill+"deletes placements of a drill")
		expectDenied(controller.Delete(ctx, namespaceOf(ns, nil)), ruleDrill+"deletes namespaces of a drill")
		Expect(controller.Delete(ctx, sandbox)).To(Succeed())

		By("leaving everyone else alone")
		Expect(bed.Hub.Client.Create(ctx, namespaceOf("not-a-sandbox", nil), client.DryRunAll)).To(Succeed())
		Expect(bed.Hub.Client.Delete(ctx, placement("not-a-drill", nil))).To(Succeed())
	})
})

// expectDenied checks that err is the policy's denial, with the message of the rule.
func expectDenied(err error, rule string) {
	GinkgoHelper()
	Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want forbidden, got %v", err)
	Expect(err).To(MatchError(ContainSubstring("denied request: " + rule)))
}

// patchAs patches the ConfigMap key as c with change, made to the ConfigMap as the hub holds
// it now.
func patchAs(ctx context.Context, c client.Client, key client.ObjectKey, change func(*corev1.ConfigMap)) error {
	GinkgoHelper()
	cm := &corev1.ConfigMap{}
	Expect(bed.Hub.Client.Get(ctx, key, cm)).To(Succeed())
	orig := cm.DeepCopy()
	change(cm)
	return c.Patch(ctx, cm, client.MergeFrom(orig))
}

// configMap creates, as the hub's admin, the ConfigMap ns/name that place sets up, and
// returns its key.
func configMap(ctx context.Context, ns, name string, place func(*corev1.ConfigMap)) client.ObjectKey {
	GinkgoHelper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	place(cm)
	Expect(bed.Hub.Client.Create(ctx, cm)).To(Succeed())
	return client.ObjectKeyFromObject(cm)
}

// heartbeat is a heartbeat Lease as a syncer writes it.
func heartbeat(ns, name string) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("syncer/" + name), LeaseDurationSeconds: ptr.To[int32](10), RenewTime: ptr.To(metav1.NowMicro()),
		},
	}
}

// volume is a hub PV as an upsync makes it, with the states of its targets.
func volume(name string, states map[string]workloadv1alpha1.ResourceState) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				CSI: &corev1.CSIPersistentVolumeSource{Driver: "sim.custody.dev", VolumeHandle: name},
			},
		},
	}
	for key, state := range states {
		workloadv1alpha1.SetState(pv, key, state)
	}
	return pv
}
