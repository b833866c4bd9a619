package syncer

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/e2e/framework"
)

// podSpec is a pod spec with the user's own placement.
func podSpec(restart corev1.RestartPolicy) corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: restart,
		NodeSelector:  map[string]string{"disk": "hdd"},
		Tolerations:   []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		Containers:    []corev1.Container{{Name: "main", Image: "registry.example/app:1"}},
	}
}

func deployment(ns, name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	spec := podSpec(corev1.RestartPolicyAlways)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: synced(nil, "m1")},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

var _ = Describe("Down-sync", func() {
	var m1 client.Client

	BeforeEach(func() { m1 = bed.Member("m1").Client })

	It("syncs objects down into the translated namespace and keeps them equal to the hub's", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		hubNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		framework.Update(ctx, hub, hubNS, func() { hubNS.Labels["team"] = "a" })
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings", Labels: synced(map[string]string{"app": "web"}, "m1")},
			Data:       map[string]string{"color": "blue"},
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "credentials", Labels: synced(nil, "m1")},
			Data:       map[string][]byte{"password": []byte("s3cret")},
		}
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: synced(nil, "m1")},
			Spec: corev1.ServiceSpec{
				Selector: map[string]string{"app": "web"},
				Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "runner", Labels: synced(nil, "m1")}}
		// A sandbox's isolation: no traffic in or out of its pods, but among them.
		isolation := &networkingv1.NetworkPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "isolate", Labels: synced(nil, "m1")},
			Spec: networkingv1.NetworkPolicySpec{
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
				Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}}},
			},
		}
		unplaced := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "not-placed"}}
		for _, obj := range []client.Object{cm, secret, svc, sa, isolation, unplaced} {
			Expect(hub.Create(ctx, obj)).To(Succeed())
		}

		By("creating the downstream namespace, pointing back to the hub")
		downNS := &corev1.Namespace{}
		Eventually(fetch(ctx, m1, client.ObjectKey{Name: targetOf("m1").Namespace(ns)}, downNS)).WithContext(ctx).Should(Succeed())
		Expect(downNS.Annotations).To(HaveKeyWithValue(transform.HubNamespaceAnnotation, ns))
		Expect(downNS.Labels).To(HaveKeyWithValue(transform.TargetLabel, "m1"))
		Expect(downNS.Labels).To(HaveKeyWithValue(transform.HubLabel, hubID))
		Expect(downNS.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(downNS), downNS)).To(Succeed())
			g.Expect(downNS.Labels).To(HaveKeyWithValue("team", "a"))
		}).WithContext(ctx).Should(Succeed())

		By("copying each object's content, without the protocol's labels")
		downCM := &corev1.ConfigMap{}
		Eventually(fetch(ctx, m1, downKey("m1", cm), downCM)).WithContext(ctx).Should(Succeed())
		Expect(downCM.Data).To(Equal(cm.Data))
		Expect(downCM.Labels).To(HaveKeyWithValue("app", "web"))
		Expect(downCM.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		Expect(downCM.Annotations).To(HaveKeyWithValue(transform.HubNameAnnotation, "settings"))
		downSecret := &corev1.Secret{}
		Eventually(fetch(ctx, m1, downKey("m1", secret), downSecret)).WithContext(ctx).Should(Succeed())
		Expect(downSecret.Data).To(Equal(secret.Data))
		downSvc := &corev1.Service{}
		Eventually(fetch(ctx, m1, downKey("m1", svc), downSvc)).WithContext(ctx).Should(Succeed())
		Expect(downSvc.Spec.Ports).To(Equal([]corev1.ServicePort{{Name: "http", Protocol: corev1.ProtocolTCP, Port: 80, TargetPort: intstr.FromInt32(8080)}}))
		Expect(downSvc.Spec.ClusterIP).NotTo(BeEmpty(), "the member allocates the Service's address")
		Eventually(fetch(ctx, m1, downKey("m1", sa), &corev1.ServiceAccount{})).WithContext(ctx).Should(Succeed())
		downPolicy := &networkingv1.NetworkPolicy{}
		Eventually(fetch(ctx, m1, downKey("m1", isolation), downPolicy)).WithContext(ctx).Should(Succeed())
		Expect(downPolicy.Spec).To(Equal(isolation.Spec))
		Consistently(fetch(ctx, m1, downKey("m1", unplaced), &corev1.ConfigMap{})).WithContext(ctx).
			Should(Satisfy(apierrors.IsNotFound), "an object not labelled for the target was synced")

		By("settling: nothing is written while nothing changes, and a change writes only what changed")
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(downNS), downNS)).To(Succeed())
			g.Expect(downNS.Labels).To(HaveKeyWithValue(corev1.LabelMetadataName, downNS.Name))
		}).WithContext(ctx).Should(Succeed())
		contents := []string{"ConfigMap", "Secret", "Service", "ServiceAccount", "NetworkPolicy"}
		nsWrites, contentWrites := writes("m1", "Namespace"), writes("m1", contents...)
		Consistently(func() []float64 {
			return []float64{writes("m1", "Namespace"), writes("m1", contents...)}
		}).WithContext(ctx).Should(Equal([]float64{nsWrites, contentWrites}))
		framework.Update(ctx, hub, cm, func() { cm.Annotations = map[string]string{"touched": "yes"} })
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", cm), downCM)).To(Succeed())
			g.Expect(downCM.Annotations).To(HaveKeyWithValue("touched", "yes"))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func() []float64 {
			return []float64{writes("m1", "Namespace"), writes("m1", contents...)}
		}).WithContext(ctx).WithTimeout(time.Second).Should(Equal([]float64{nsWrites, contentWrites + 1}))

		By("holding every synced hub object with the syncer's finalizer")
		for _, obj := range []client.Object{hubNS, cm, secret, svc, sa} {
			Expect(hub.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
			Expect(obj.GetFinalizers()).To(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")), "%T %s", obj, obj.GetName())
		}

		By("following a change on the hub, a removed label included")
		framework.Update(ctx, hub, cm, func() {
			cm.Data = map[string]string{"color": "green"}
			delete(cm.Labels, "app")
		})
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", cm), downCM)).To(Succeed())
			g.Expect(downCM.Data).To(Equal(map[string]string{"color": "green"}))
			g.Expect(downCM.Labels).NotTo(HaveKey("app"))
		}).WithContext(ctx).Should(Succeed())

		By("reverting a change made in the member")
		downCM.Data = map[string]string{"color": "red"}
		Expect(m1.Update(ctx, downCM)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", cm), downCM)).To(Succeed())
			g.Expect(downCM.Data).To(Equal(map[string]string{"color": "green"}))
		}).WithContext(ctx).Should(Succeed())

		By("leaving alone a member object of the same name that it did not create")
		local := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: downNS.Name, Name: "local"},
			Data:       map[string]string{"owner": "member"},
		}
		Expect(m1.Create(ctx, local)).To(Succeed())
		hubLocal := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local", Labels: synced(nil, "m1")},
			Data:       map[string]string{"owner": "hub"},
		}
		Expect(hub.Create(ctx, hubLocal)).To(Succeed())
		Eventually(func(g Gomega) {
			list := &eventsv1.EventList{}
			g.Expect(hub.List(ctx, list, client.InNamespace(ns))).To(Succeed())
			g.Expect(list.Items).To(ContainElement(And(HaveField("Reason", workloadv1alpha1.ReasonDownstreamConflict),
				HaveField("Regarding.Name", "local"), HaveField("Note", ContainSubstring("left alone")))))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(local), local)).To(Succeed())
			g.Expect(local.Data).To(Equal(map[string]string{"owner": "member"}))
			g.Expect(local.Labels).NotTo(HaveKey(transform.TargetLabel))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(hubLocal), hubLocal)).To(Succeed())
			g.Expect(hubLocal.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")), "held for a copy the syncer did not make")
		}).WithContext(ctx).Should(Succeed())
	})

	It("merges the target's node selector and tolerations into pod templates under the user's own", func(ctx SpecContext) {
		hub := bed.Hub.Client
		st := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: "m1"}}
		targetToleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "custody", Effect: corev1.TaintEffectNoSchedule}
		framework.Update(ctx, hub, st, func() {
			st.Spec.NodeSelector = map[string]string{"custody.dev/pool": "stateful", "disk": "ssd"}
			st.Spec.Tolerations = []corev1.Toleration{targetToleration}
		})
		DeferCleanup(func(ctx SpecContext) {
			framework.Update(ctx, hub, st, func() { st.Spec.NodeSelector, st.Spec.Tolerations = nil, nil })
		})
		ns := hubNamespace(ctx, "m1")
		deploy := deployment(ns, "web", 1)
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "once", Labels: synced(nil, "m1")},
			Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec(corev1.RestartPolicyNever)}},
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "single", Labels: synced(nil, "m1")},
			Spec:       podSpec(corev1.RestartPolicyAlways),
		}
		for _, obj := range []client.Object{deploy, job, pod} {
			Expect(hub.Create(ctx, obj)).To(Succeed())
		}
		userToleration := podSpec(corev1.RestartPolicyAlways).Tolerations[0]
		wantSelector := map[string]string{"custody.dev/pool": "stateful", "disk": "hdd"}

		downDeploy, downJob, downPod := &appsv1.Deployment{}, &batchv1.Job{}, &corev1.Pod{}
		Eventually(fetch(ctx, m1, downKey("m1", deploy), downDeploy)).WithContext(ctx).Should(Succeed())
		Expect(downDeploy.Spec.Template.Spec.NodeSelector).To(Equal(wantSelector))
		Expect(downDeploy.Spec.Template.Spec.Tolerations).To(Equal([]corev1.Toleration{userToleration, targetToleration}))
		Eventually(fetch(ctx, m1, downKey("m1", job), downJob)).WithContext(ctx).Should(Succeed())
		Expect(downJob.Spec.Template.Spec.NodeSelector).To(Equal(wantSelector))
		Expect(downJob.Spec.Template.Spec.Tolerations).To(ContainElements(userToleration, targetToleration))
		Expect(downJob.Spec.Selector.MatchLabels).To(HaveKeyWithValue("batch.kubernetes.io/controller-uid", string(downJob.UID)),
			"the member generates the Job's selector from its own UID")
		Eventually(fetch(ctx, m1, downKey("m1", pod), downPod)).WithContext(ctx).Should(Succeed())
		Expect(downPod.Spec.NodeSelector).To(Equal(wantSelector))
		Expect(downPod.Spec.Tolerations).To(ContainElements(userToleration, targetToleration))

		By("following a change of the target's placement")
		zone := corev1.Toleration{Key: "zone", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
		framework.Update(ctx, hub, st, func() { st.Spec.Tolerations = append(st.Spec.Tolerations, zone) })
		Eventually(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", deploy), downDeploy)).To(Succeed())
			g.Expect(downDeploy.Spec.Template.Spec.Tolerations).To(Equal([]corev1.Toleration{userToleration, targetToleration, zone}))
		}).WithContext(ctx).Should(Succeed())

		By("leaving the hub's own copy as the user wrote it")
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
		Expect(deploy.Spec.Template.Spec.NodeSelector).To(Equal(map[string]string{"disk": "hdd"}))
		Expect(deploy.Spec.Template.Spec.Tolerations).To(Equal([]corev1.Toleration{userToleration}))
	})

	It("syncs status up without touching the hub's spec", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		deploy := deployment(ns, "api", 2)
		Expect(hub.Create(ctx, deploy)).To(Succeed())
		generation, spec := deploy.Generation, deploy.Spec.DeepCopy()

		// The member's deployment controller runs; the hub has none, so any status is the member's.
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(deploy), deploy)).To(Succeed())
			g.Expect(deploy.Status.Replicas).To(Equal(int32(2)))
			g.Expect(deploy.Status.Conditions).NotTo(BeEmpty())
		}).WithContext(ctx).Should(Succeed())
		downDeploy := &appsv1.Deployment{}
		Expect(m1.Get(ctx, downKey("m1", deploy), downDeploy)).To(Succeed())
		Expect(deploy.Status.UnavailableReplicas).To(Equal(downDeploy.Status.UnavailableReplicas))
		Expect(deploy.Generation).To(Equal(generation))
		Expect(deploy.Spec).To(Equal(*spec))
	})

	It("removes a downstream object through the deletion flow, once coordination lets go", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: ns, Name: "held", Labels: synced(nil, "m1"),
				Annotations: map[string]string{workloadv1alpha1.FinalizersAnnotation("m1"): "coordination.example/drain"},
			},
		}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		Eventually(fetch(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())

		By("requesting the removal while a coordination finalizer holds it")
		framework.Update(ctx, hub, cm, func() {
			cm.Annotations[workloadv1alpha1.DeletionAnnotation("m1")] = time.Now().UTC().Format(time.RFC3339)
		})
		Consistently(fetch(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
		Expect(cm.Labels).To(HaveKey(workloadv1alpha1.StateLabel("m1")))

		By("letting go: the downstream copy goes, then the hub object is released")
		framework.Update(ctx, hub, cm, func() { delete(cm.Annotations, workloadv1alpha1.FinalizersAnnotation("m1")) })
		Eventually(framework.Deleted(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
			g.Expect(cm.Annotations).NotTo(HaveKey(workloadv1alpha1.DeletionAnnotation("m1")))
			g.Expect(cm.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())
	})

	It("keeps a deleted hub object until its downstream copy is gone", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: "doomed", Labels: synced(nil, "m1"),
			Annotations: map[string]string{workloadv1alpha1.FinalizersAnnotation("m1"): "coordination.example/drain"},
		}}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		Eventually(fetch(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Finalizers).To(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())

		Expect(hub.Delete(ctx, cm)).To(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", cm), &corev1.ConfigMap{})).To(Succeed())
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})).To(Succeed())
		}).WithContext(ctx).Should(Succeed())

		framework.Update(ctx, hub, cm, func() { delete(cm.Annotations, workloadv1alpha1.FinalizersAnnotation("m1")) })
		Eventually(framework.Deleted(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(framework.Deleted(ctx, hub, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
	})

	It("removes the downstream namespace last, once nothing in it is synced", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "content", Labels: synced(nil, "m1")}}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		downNS := client.ObjectKey{Name: targetOf("m1").Namespace(ns)}
		Eventually(fetch(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())

		hubNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
		removal := time.Now().UTC().Format(time.RFC3339)
		framework.Update(ctx, hub, hubNS, func() {
			hubNS.Annotations = map[string]string{workloadv1alpha1.DeletionAnnotation("m1"): removal}
		})
		Consistently(func(g Gomega) {
			ns := &corev1.Namespace{}
			g.Expect(m1.Get(ctx, downNS, ns)).To(Succeed())
			g.Expect(ns.DeletionTimestamp).To(BeNil())
			g.Expect(m1.Get(ctx, downKey("m1", cm), &corev1.ConfigMap{})).To(Succeed())
		}).WithContext(ctx).Should(Succeed())

		framework.Update(ctx, hub, cm, func() {
			cm.Annotations = map[string]string{workloadv1alpha1.DeletionAnnotation("m1"): removal}
		})
		Eventually(framework.Deleted(ctx, m1, downNS, &corev1.Namespace{})).WithContext(ctx).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(hubNS), hubNS)).To(Succeed())
			g.Expect(hubNS.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
			g.Expect(hubNS.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Labels).NotTo(HaveKey(workloadv1alpha1.StateLabel("m1")))
		}).WithContext(ctx).Should(Succeed())
	})

	It("removes the copies it made of hub objects no longer synced to the target, and nothing else", func(ctx SpecContext) {
		hub := bed.Hub.Client
		ns := hubNamespace(ctx, "m1")
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dropped", Labels: synced(nil, "m1")}}
		kept := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "kept", Labels: synced(nil, "m1")}}
		Expect(hub.Create(ctx, cm)).To(Succeed())
		Expect(hub.Create(ctx, kept)).To(Succeed())
		Eventually(fetch(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(fetch(ctx, m1, downKey("m1", kept), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		local := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: targetOf("m1").Namespace(ns), Name: "member-own"}}
		Expect(m1.Create(ctx, local)).To(Succeed())

		By("dropping the state label without the deletion flow")
		framework.Update(ctx, hub, cm, func() { delete(cm.Labels, workloadv1alpha1.StateLabel("m1")) })
		Eventually(framework.Deleted(ctx, m1, downKey("m1", cm), &corev1.ConfigMap{})).WithContext(ctx).Should(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(hub.Get(ctx, client.ObjectKeyFromObject(cm), cm)).To(Succeed())
			g.Expect(cm.Finalizers).NotTo(ContainElement(workloadv1alpha1.SyncerFinalizer("m1")))
		}).WithContext(ctx).Should(Succeed())
		Consistently(func(g Gomega) {
			g.Expect(m1.Get(ctx, downKey("m1", kept), &corev1.ConfigMap{})).To(Succeed())
			g.Expect(m1.Get(ctx, client.ObjectKeyFromObject(local), &corev1.ConfigMap{})).To(Succeed())
		}).WithContext(ctx).Should(Succeed())
	})
})
