package app

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// rank orders the kinds of an import, before the references between objects: Custody's
// cluster-scoped objects (SyncTargets, Locations, Placements, pairs, Fences) first, then
// namespaces, what is in them, claims, Custody's records of the claims, and PVs last.
func rank(obj *unstructured.Unstructured) int {
	gk := obj.GroupVersionKind().GroupKind()
	switch {
	case isCustodyGroup(gk.Group) && obj.GetNamespace() == "":
		return 0
	case gk == namespaceKind:
		return 1
	case gk == pvcKind:
		return 3
	case isCustodyGroup(gk.Group):
		return 4
	case gk == pvKind:
		return 5
	}
	return 2
}

// dependencies are the uids, in the export, of the objects that must exist before obj is
// created: its owners, whose new uids its ownerReferences take; its namespace; and, for a PV,
// the claim its claimRef names, whose new uid the claimRef takes.
func dependencies(obj *unstructured.Unstructured, namespaces map[string]types.UID) []types.UID {
	var deps []types.UID
	for _, ref := range obj.GetOwnerReferences() {
		deps = append(deps, ref.UID)
	}
	if uid, ok := namespaces[obj.GetNamespace()]; ok {
		deps = append(deps, uid)
	}
	if uid, _, _ := unstructured.NestedString(obj.Object, "spec", "claimRef", "uid"); uid != "" && obj.GroupVersionKind().GroupKind() == pvKind {
		deps = append(deps, types.UID(uid))
	}
	return deps
}

// restoreOrder orders objs for creation: by rank, then kind, namespace and name, each
// object after the objects of the export it depends on. A dependency outside the export is
// not waited for (remap drops the reference). Dependencies that form a cycle are refused.
func restoreOrder(objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	inFile := map[types.UID]bool{}
	namespaces := map[string]types.UID{}
	for _, o := range objs {
		inFile[o.GetUID()] = true
		if o.GroupVersionKind().GroupKind() == namespaceKind {
			namespaces[o.GetName()] = o.GetUID()
		}
	}
	pending := slices.Clone(objs)
	slices.SortStableFunc(pending, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(describe(a), describe(b)))
	})
	created := map[types.UID]bool{}
	ready := func(o *unstructured.Unstructured) bool {
		return !slices.ContainsFunc(dependencies(o, namespaces), func(uid types.UID) bool { return inFile[uid] && !created[uid] })
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for len(pending) > 0 {
		var rest []*unstructured.Unstructured
		for _, o := range pending {
			if ready(o) {
				out = append(out, o)
				created[o.GetUID()] = true
			} else {
				rest = append(rest, o)
			}
		}
		if len(rest) == len(pending) {
			return nil, fmt.Errorf("the ownerReferences of %s and %d other objects form a cycle", describe(rest[0]), len(rest)-1)
		}
		pending = rest
	}
	return out, nil
}

// remap points obj's references at the new uids of the objects they name (uids maps an
// export's uid to the uid of its copy): its ownerReferences and a PV's claimRef. A reference
// to an object that was not restored is dropped, as the garbage collector would delete an
// object whose owners are all gone; remap returns what it dropped.
func remap(obj *unstructured.Unstructured, uids map[types.UID]types.UID) (dropped []string) {
	refs := obj.GetOwnerReferences()
	kept := refs[:0]
	for _, ref := range refs {
		if uid, ok := uids[ref.UID]; ok {
			ref.UID = uid
			kept = append(kept, ref)
		} else {
			dropped = append(dropped, fmt.Sprintf("owner %s/%s", strings.ToLower(ref.Kind), ref.Name))
		}
	}
	if len(refs) > 0 {
		obj.SetOwnerReferences(kept)
	}
	if obj.GroupVersionKind().GroupKind() != pvKind {
		return dropped
	}
	if old, _, _ := unstructured.NestedString(obj.Object, "spec", "claimRef", "uid"); old != "" {
		if uid, ok := uids[types.UID(old)]; ok {
			_ = unstructured.SetNestedField(obj.Object, string(uid), "spec", "claimRef", "uid")
		} else {
			unstructured.RemoveNestedField(obj.Object, "spec", "claimRef", "uid")
			dropped = append(dropped, "claimRef uid")
		}
	}
	return dropped
}
