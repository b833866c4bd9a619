package transform

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// podSpecPaths are where the kinds that run pods keep their pod spec.
var podSpecPaths = map[schema.GroupKind][]string{
	{Kind: "Pod"}:                        {"spec"},
	{Kind: "ReplicationController"}:      {"spec", "template", "spec"},
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template", "spec"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template", "spec"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template", "spec"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template", "spec"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template", "spec"},
}

// fixedPodSpec are the kinds whose pod spec a cluster does not let change once created: the
// placement they were created with stays.
var fixedPodSpec = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                 true,
	{Group: "batch", Kind: "Job"}: true,
}

// HasPodTemplate tells whether objects of the kind carry a pod spec that placement applies to.
func HasPodTemplate(gk schema.GroupKind) bool {
	_, ok := podSpecPaths[gk]
	return ok
}

// placePods merges a target's node selector and tolerations into the object's pod spec: the
// user's node selector keys win, and the target's tolerations are added after the user's
// unless already there. A Pod or Job that exists downstream keeps the placement it has.
func placePods(obj, current *unstructured.Unstructured, nodeSelector map[string]string, tolerations []corev1.Toleration) error {
	gk := obj.GroupVersionKind().GroupKind()
	path, ok := podSpecPaths[gk]
	if !ok {
		return nil
	}
	raw, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return err
	}
	if fixedPodSpec[gk] && current != nil {
		kept, _, err := unstructured.NestedMap(current.Object, path...)
		if err != nil {
			return err
		}
		for _, f := range []string{"nodeSelector", "tolerations"} {
			delete(raw, f)
			if v, ok := kept[f]; ok {
				raw[f] = v
			}
		}
		return unstructured.SetNestedMap(obj.Object, raw, path...)
	}
	if len(nodeSelector) == 0 && len(tolerations) == 0 {
		return nil
	}
	spec := podPlacement{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &spec); err != nil {
		return err
	}
	selector := maps.Clone(nodeSelector)
	maps.Copy(selector, spec.NodeSelector)
	spec.NodeSelector = selector
	for _, tol := range tolerations {
		if !slices.ContainsFunc(spec.Tolerations, func(t corev1.Toleration) bool { return equality.Semantic.DeepEqual(t, tol) }) {
			spec.Tolerations = append(spec.Tolerations, tol)
		}
	}
	placed, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		return err
	}
	maps.Copy(raw, placed)
	return unstructured.SetNestedMap(obj.Object, raw, path...)
}

// podPlacement is the part of a pod spec that placement touches.
type podPlacement struct {
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
}
