package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// notExported are the resources of a namespace that export leaves out: records of what
// happened (events) and what the hub derives from other objects (endpoints).
var notExported = []schema.GroupResource{
	{Resource: "events"}, {Group: "events.k8s.io", Resource: "events"},
	{Resource: "endpoints"}, {Group: "discovery.k8s.io", Resource: "endpointslices"},
}

// hubMade tells whether the hub makes obj itself in a namespace: the root CA's ConfigMap and
// the Secrets of legacy service account tokens. An import would copy the old hub's.
func hubMade(obj *unstructured.Unstructured) bool {
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case gk == schema.GroupKind{Kind: "ConfigMap"}:
		return obj.GetName() == rootCAConfigMap
	case gk == schema.GroupKind{Kind: "Secret"}:
		t, _, _ := unstructured.NestedString(obj.Object, "type")
		return t == string(corev1.SecretTypeServiceAccountToken)
	}
	return false
}

// isPlaced tells whether the namespace is Custody's: placed on a target, or bound to
// a Placement.
func isPlaced(ns *unstructured.Unstructured) bool {
	if _, ok := ns.GetAnnotations()[schedulingv1alpha1.PlacementAnnotation]; ok {
		return true
	}
	for k := range ns.GetLabels() {
		if workloadv1alpha1.IsStateLabel(k) {
			return true
		}
	}
	return false
}

// exportSet gathers what export writes.
type exportSet struct {
	objs []*unstructured.Unstructured
	uids map[types.UID]bool
	// namespaces are the namespaces whose contents go whole.
	namespaces map[string]bool
}

func (s *exportSet) add(objs ...*unstructured.Unstructured) {
	for _, o := range objs {
		stripForExport(o)
		s.objs = append(s.objs, o)
		s.uids[o.GetUID()] = true
	}
}

// ownedByExported tells whether one of obj's owners is exported: a LocationPair's key Secret
// in custody-system, for instance.
func (s *exportSet) ownedByExported(obj *unstructured.Unstructured) bool {
	return slices.ContainsFunc(obj.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return s.uids[r.UID] })
}

// collect reads what export writes: every object of Custody's API groups; the namespaces
// placed or bound by Custody, or holding its objects, with everything in them but events,
// endpoints and what the hub makes itself; every PV (a hub runs no storage: its PVs are
// Custody's records of the members' volumes); and the objects elsewhere that an exported
// object owns (a LocationPair's key Secret).
func collect(ctx context.Context, dyn dynamic.Interface, cat catalog) ([]*unstructured.Unstructured, error) {
	s := &exportSet{uids: map[types.UID]bool{}, namespaces: map[string]bool{}}
	resources := cat.preferred()
	custody := 0
	for _, r := range resources {
		if !isCustodyGroup(r.gvr.Group) {
			continue
		}
		custody++
		objs, err := listAll(ctx, dyn, r, 0)
		if err != nil {
			return nil, err
		}
		s.add(objs...)
		for _, o := range objs {
			if ns := o.GetNamespace(); ns != "" && !schedulingv1alpha1.SystemNamespace(ns) {
				s.namespaces[ns] = true
			}
		}
	}
	if custody == 0 {
		return nil, errNoCustody
	}
	if err := s.collectNamespaces(ctx, dyn, cat); err != nil {
		return nil, err
	}
	for _, r := range resources {
		if isCustodyGroup(r.gvr.Group) || slices.Contains(notExported, r.gvr.GroupResource()) || r.gvr.GroupResource() == (schema.GroupResource{Resource: "namespaces"}) {
			continue
		}
		if err := s.collectResource(ctx, dyn, r); err != nil {
			return nil, err
		}
	}
	return s.objs, nil
}

// collectNamespaces adds the namespaces Custody placed or bound, and those that hold its
// objects.
func (s *exportSet) collectNamespaces(ctx context.Context, dyn dynamic.Interface, cat catalog) error {
	r, ok := cat[corev1.SchemeGroupVersion.WithKind("Namespace")]
	if !ok {
		return errors.New("the hub serves no namespaces")
	}
	all, err := listAll(ctx, dyn, r, 0)
	if err != nil {
		return err
	}
	for _, ns := range all {
		if isPlaced(ns) && !schedulingv1alpha1.SystemNamespace(ns.GetName()) {
			s.namespaces[ns.GetName()] = true
		}
		if s.namespaces[ns.GetName()] {
			s.add(ns)
		}
	}
	return nil
}

// collectResource adds the objects of r that export writes: for a namespaced resource, those
// in the namespaces it copies whole and those an exported object owns; for a cluster-scoped
// one, PVs and what an exported object owns.
func (s *exportSet) collectResource(ctx context.Context, dyn dynamic.Interface, r apiResource) error {
	objs, err := listAll(ctx, dyn, r, 0)
	if err != nil {
		return err
	}
	for _, o := range objs {
		whole := s.namespaces[o.GetNamespace()] || r.gvr.GroupResource() == (schema.GroupResource{Resource: "persistentvolumes"})
		if (whole || s.ownedByExported(o)) && !hubMade(o) {
			s.add(o)
		}
	}
	return nil
}

// hubExportFlags are the flags of hub export.
type hubExportFlags struct {
	output string
}

// hubExport writes the hub's export to f.output.
func (o *options) hubExport(ctx context.Context, f *hubExportFlags) error {
	if f.output == "-" && isTerminal(o.streams.Out) {
		return errors.New("the export holds the Secrets of the placed namespaces and stdout is a terminal: write it to a file with -o FILE")
	}
	start := time.Now()
	h, err := o.hub()
	if err != nil {
		return err
	}
	dyn, cat, err := o.dynamicHub()
	if err != nil {
		return err
	}
	id, err := workloadv1alpha1.ReadHubIdentity(ctx, h)
	if err != nil {
		return err
	}
	objs, err := collect(ctx, dyn, cat)
	if err != nil {
		return err
	}
	data, err := newHubExport(id, metav1.Now(), objs).marshal()
	if err != nil {
		return err
	}
	if err := writeExport(f.output, data, o); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "exported %s of hub %s (%d bytes, %s)\n", countKinds(objs), id, len(data), time.Since(start).Round(time.Millisecond))
	return nil
}

// writeExport writes data to path, readable by its owner alone, or to stdout for "-".
func writeExport(path string, data []byte, o *options) error {
	if path == "-" {
		_, err := o.streams.Out.Write(data)
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing the export: %w", err)
	}
	return nil
}

// countKinds says how many objects of each kind objs holds, the most numerous first.
func countKinds(objs []*unstructured.Unstructured) string {
	counts := map[string]int{}
	for _, o := range objs {
		counts[strings.ToLower(o.GetKind())]++
	}
	kinds := make([]string, 0, len(counts))
	for k := range counts {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return fmt.Sprintf("%d objects (%s)", len(objs), strings.Join(parts, ", "))
}
