package dr

import (
	"context"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/coordination/dr"
)

// copiedAnnotation on a sandbox says that everything of the pair's namespace was copied into
// it: a drill copies a namespace once, as it was when the drill started.
const copiedAnnotation = "scheduling.custody.dev/drill-copied"

// isolationPolicy names the NetworkPolicy that isolates a sandbox.
const isolationPolicy = "drill-isolation"

// copiedKinds are the kinds a drill copies from a pair's namespace into its sandbox, besides
// the claims, in the order it makes them: what the workloads use before the workloads.
// Pods, Jobs and the like are not copied: a drill starts the namespace's Deployments and
// StatefulSets, never its one-off runs.
var copiedKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"}, {Version: "v1", Kind: "Secret"}, {Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "Service"}, {Group: "apps", Version: "v1", Kind: "Deployment"}, {Group: "apps", Version: "v1", Kind: "StatefulSet"},
}

// placementOf names the Placement that binds the sandboxes of the drill called drill.
func placementOf(drill string) string { return "drill-" + drill }

// makeSandboxes makes what the drill's sandboxes lack, then the Placement that binds them to
// the drill's Location.
func (r *DrillReconciler) makeSandboxes(ctx context.Context, d *schedulingv1alpha1.Drill, s *scope, dec dr.DrillDecision) error {
	for _, ns := range dec.Status.Namespaces {
		if err := r.makeSandbox(ctx, d.Name, ns, s, dec); err != nil {
			return err
		}
	}
	pl := &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: placementOf(d.Name), Labels: map[string]string{schedulingv1alpha1.DrillLabel: d.Name}},
		Spec: schedulingv1alpha1.PlacementSpec{LocationName: dec.Status.Location,
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{schedulingv1alpha1.DrillLabel: d.Name}}},
	}
	return r.create(ctx, pl)
}

// makeSandbox makes the sandbox of one of the pair's namespaces, isolated, with copies of the
// namespace's objects and its claims, each restored from the replica the decision picked.
func (r *DrillReconciler) makeSandbox(ctx context.Context, drill string, ns schedulingv1alpha1.DrillNamespace, s *scope, dec dr.DrillDecision) error {
	sandbox := &corev1.Namespace{}
	switch err := r.Client.Get(ctx, client.ObjectKey{Name: ns.Sandbox}, sandbox); {
	case err == nil && sandbox.Annotations[copiedAnnotation] == "true":
		return nil
	case apierrors.IsNotFound(err):
		sandbox = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Sandbox, Labels: map[string]string{schedulingv1alpha1.DrillLabel: drill}}}
		if err := r.create(ctx, sandbox); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if err := r.create(ctx, isolation(ns.Sandbox, drill)); err != nil {
		return err
	}
	for key, restore := range dec.Restores {
		if c := s.claims[key]; c != nil && c.Namespace == ns.Namespace {
			if err := r.create(ctx, sandboxClaim(c, ns.Sandbox, drill, restore, dec.Classes[key])); err != nil {
				return err
			}
		}
	}
	for _, gvk := range copiedKinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.APIReader.List(ctx, list, client.InNamespace(ns.Namespace)); err != nil {
			return err
		}
		for i := range list.Items {
			if out := sandboxCopy(&list.Items[i], ns.Sandbox, drill); out != nil {
				if err := r.create(ctx, out); err != nil {
					return err
				}
			}
		}
	}
	patch := client.MergeFrom(sandbox.DeepCopy())
	metav1.SetMetaDataAnnotation(&sandbox.ObjectMeta, copiedAnnotation, "true")
	return r.Client.Patch(ctx, sandbox, patch)
}

// create makes obj, unless it exists.
func (r *DrillReconciler) create(ctx context.Context, obj client.Object) error {
	return client.IgnoreAlreadyExists(r.Client.Create(ctx, obj, client.FieldOwner(drillFieldOwner)))
}

// isolation is the NetworkPolicy that cuts a sandbox's pods off everything but each other
// and the cluster's DNS: the copies cannot reach the pair's running workloads, nor anything
// outside the cluster, and nothing outside the sandbox reaches them, wherever the member's
// network plugin enforces NetworkPolicies.
func isolation(sandbox, drill string) *networkingv1.NetworkPolicy {
	dns := intstr.FromInt32(53)
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	sameNamespace := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{}}}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: isolationPolicy, Namespace: sandbox, Labels: map[string]string{schedulingv1alpha1.DrillLabel: drill}},
		Spec: networkingv1.NetworkPolicySpec{
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: sameNamespace}},
			Egress: []networkingv1.NetworkPolicyEgressRule{{To: sameNamespace}, {
				To: []networkingv1.NetworkPolicyPeer{{
					NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: "kube-system"}},
					PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
				}},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dns}, {Protocol: &tcp, Port: &dns}},
			}},
		},
	}
}

// sandboxClaim is the copy of the pair's claim c in the sandbox: its spec without the volume
// it was bound to, restored from the replica restore names (empty: made empty), in class when
// the pair maps the claim's class to another at the drill's Location.
func sandboxClaim(c *corev1.PersistentVolumeClaim, sandbox, drill, restore, class string) *corev1.PersistentVolumeClaim {
	out := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: sandbox, Labels: ownKeys(c.Labels), Annotations: ownKeys(c.Annotations)},
		Spec:       *c.Spec.DeepCopy(),
	}
	out.Labels[schedulingv1alpha1.DrillLabel] = drill
	out.Spec.VolumeName, out.Spec.DataSource, out.Spec.DataSourceRef = "", nil, nil
	if restore != "" {
		out.Annotations[storagev1alpha1.RestoreAnnotation] = restore
	}
	if class != "" {
		out.Annotations[storagev1alpha1.StorageClassAnnotation] = class
	}
	return out
}

// sandboxCopy is the copy of obj in the sandbox, or nil for what the cluster makes in every
// namespace by itself (the default ServiceAccount, its token Secrets, the root CA
// ConfigMap). A Service is copied as ClusterIP (headless stays headless): it takes no
// traffic from outside the cluster, nor an address of the pair's own.
func sandboxCopy(obj *unstructured.Unstructured, sandbox, drill string) *unstructured.Unstructured {
	switch kind, name := obj.GetKind(), obj.GetName(); {
	case kind == "ConfigMap" && name == "kube-root-ca.crt", kind == "ServiceAccount" && name == "default":
		return nil
	case kind == "Secret":
		if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == string(corev1.SecretTypeServiceAccountToken) {
			return nil
		}
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range obj.DeepCopy().Object {
		if k != "metadata" && k != "status" {
			out.Object[k] = v
		}
	}
	out.SetName(obj.GetName())
	out.SetNamespace(sandbox)
	labels := ownKeys(obj.GetLabels())
	labels[schedulingv1alpha1.DrillLabel] = drill
	out.SetLabels(labels)
	out.SetAnnotations(ownKeys(obj.GetAnnotations()))
	if obj.GetKind() == "Service" {
		clusterIPOnly(out)
	}
	return out
}

// clusterIPOnly makes a Service's copy ClusterIP, without the addresses and ports its
// original was given.
func clusterIPOnly(svc *unstructured.Unstructured) {
	spec, _, _ := unstructured.NestedMap(svc.Object, "spec")
	if spec == nil {
		return
	}
	if spec["type"] != string(corev1.ServiceTypeExternalName) {
		spec["type"] = string(corev1.ServiceTypeClusterIP)
	}
	if spec["clusterIP"] != corev1.ClusterIPNone {
		delete(spec, "clusterIP")
		delete(spec, "clusterIPs")
	}
	for _, k := range []string{"externalIPs", "loadBalancerIP", "loadBalancerSourceRanges", "loadBalancerClass",
		"externalTrafficPolicy", "healthCheckNodePort", "allocateLoadBalancerNodePorts"} {
		delete(spec, k)
	}
	if ports, ok := spec["ports"].([]any); ok {
		for _, p := range ports {
			if m, ok := p.(map[string]any); ok {
				delete(m, "nodePort")
			}
		}
	}
	_ = unstructured.SetNestedMap(svc.Object, spec, "spec")
}

// ownKeys are the labels or annotations of an object that are its own: not Custody's
// (whatever names custody.dev/), nor kubectl's record of the last apply.
func ownKeys(in map[string]string) map[string]string {
	out := maps.Clone(in)
	if out == nil {
		out = map[string]string{}
	}
	maps.DeleteFunc(out, func(k, _ string) bool {
		return strings.Contains(k, "custody.dev/") || k == corev1.LastAppliedConfigAnnotation
	})
	return out
}
