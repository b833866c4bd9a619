package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// The resource types that every target may hold, named as its syncer reports them.
const (
	claimsResource     = "persistentvolumeclaims"
	volumesResource    = "persistentvolumes"
	namespacesResource = "namespaces"
)

// drain reads and lets go of what one target holds on the hub.
type drain struct {
	c      client.Client
	target string
	// uid is the SyncTarget's, as unjoin first read it.
	uid types.UID
	key string
	// types are the resource types it may hold, as resource.group, in the order of heldTypes.
	types []string
}

// drainOf is the drain of t, of the resource types its syncer reports.
func drainOf(c client.Client, t *workloadv1alpha1.SyncTarget) drain {
	return drain{c: c, target: t.Name, uid: t.UID, key: workloadv1alpha1.ToSyncTargetKey(t.Name), types: heldTypes(t.Status.SyncedResources)}
}

// heldTypes are the resource types a target whose syncer syncs the synced types may hold on
// the hub: claims and PVs first, as its volumes matter most, then the other synced types in
// order, then namespaces, which a target gives up last. Claims, PVs and namespaces are read
// whatever the syncer reports, so that no volume is missed.
func heldTypes(synced []string) []string {
	types := []string{claimsResource, volumesResource}
	for _, r := range slices.Sorted(slices.Values(synced)) {
		if !slices.Contains(types, r) && r != namespacesResource {
			types = append(types, r)
		}
	}
	return append(types, namespacesResource)
}

// held are the hub objects of one resource type that carry a target's state label.
type held struct {
	// resource is the type, as resource.group.
	resource string
	items    []metav1.PartialObjectMetadata
}

// holdings are what a target holds on the hub: the resource types it holds objects of, in
// the order of heldTypes.
type holdings []held

// count is how many objects the target holds.
func (hs holdings) count() int {
	n := 0
	for _, h := range hs {
		n += len(h.items)
	}
	return n
}

// summary counts the objects of each type, as in "2 persistentvolumeclaims, 1 namespaces".
func (hs holdings) summary() string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%d %s", len(h.items), h.resource))
	}
	return strings.Join(parts, ", ")
}

// split returns the objects of the resource type and the holdings of the other types.
func (hs holdings) split(resource string) ([]metav1.PartialObjectMetadata, holdings) {
	var others holdings
	var items []metav1.PartialObjectMetadata
	for _, h := range hs {
		if h.resource == resource {
			items = h.items
		} else {
			others = append(others, h)
		}
	}
	return items, others
}

// objects are the objects held, in the order of heldTypes.
func (hs holdings) objects() []*metav1.PartialObjectMetadata {
	var out []*metav1.PartialObjectMetadata
	for _, h := range hs {
		for i := range h.items {
			out = append(out, &h.items[i])
		}
	}
	return out
}

// targetChangedError says that the SyncTarget unjoin works on was deleted or replaced by
// another of the same name since unjoin read it.
type targetChangedError struct{ target string }

func (e *targetChangedError) Error() string {
	return fmt.Sprintf("synctarget %q was deleted or replaced while unjoin ran; nothing more was removed", e.target)
}

// unchanged tells, as an error, when d's SyncTarget is no longer the one unjoin read: its
// name and key would then be another target's.
func (d drain) unchanged(ctx context.Context) error {
	t := &workloadv1alpha1.SyncTarget{}
	err := d.c.Get(ctx, client.ObjectKey{Name: d.target}, t)
	if apierrors.IsNotFound(err) || err == nil && t.UID != d.uid {
		return &targetChangedError{d.target}
	}
	return err
}

// holdings lists, metadata only, the hub objects of d's types that carry the target's state
// label, once the target is checked unchanged. A type the hub does not serve holds nothing.
func (d drain) holdings(ctx context.Context) (holdings, error) {
	if err := d.unchanged(ctx); err != nil {
		return nil, err
	}
	var hs holdings
	for _, r := range d.types {
		gvk, err := d.c.RESTMapper().KindFor(schema.ParseGroupResource(r).WithVersion(""))
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("mapping %s: %w", r, err)
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := d.c.List(ctx, list, client.HasLabels{workloadv1alpha1.StateLabel(d.key)}); err != nil {
			return nil, fmt.Errorf("listing %s: %w", r, err)
		}
		if len(list.Items) == 0 {
			continue
		}
		// The items of a metadata list name no kind of their own.
		for i := range list.Items {
			list.Items[i].SetGroupVersionKind(gvk)
		}
		hs = append(hs, held{resource: r, items: list.Items})
	}
	return hs, nil
}

// letGoOf patches obj, read again on a conflict, until it carries nothing of the target; it
// tells whether it carried the target's state label.
func (d drain) letGoOf(ctx context.Context, obj *metav1.PartialObjectMetadata) (bool, error) {
	had := false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := d.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		if _, had = workloadv1alpha1.PresenceOn(obj, d.key); !had {
			return nil
		}
		patch := client.MergeFromWithOptions(obj.DeepCopy(), client.MergeFromWithOptimisticLock{})
		workloadv1alpha1.Drop(obj, d.key)
		return d.c.Patch(ctx, obj, patch)
	})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("releasing %s: %w", located(obj), err)
	}
	return had, nil
}

// refusalOf is unjoin's error when target still holds left after timeout: it reads the
// VolumeOwnership of each claim left for the refusal.
func refusalOf(ctx context.Context, c client.Reader, target string, timeout time.Duration, left holdings) error {
	claims, others := left.split(claimsResource)
	var states []string
	for i := range claims {
		vo := &storagev1alpha1.VolumeOwnership{}
		err := c.Get(ctx, client.ObjectKeyFromObject(&claims[i]), vo)
		if apierrors.IsNotFound(err) {
			vo = nil
		} else if err != nil {
			return err
		}
		states = append(states, claimState(&claims[i], vo))
	}
	return refusal(target, timeout, states, others)
}

// claimState names a claim with the phase and reason of its VolumeOwnership vo, nil when it
// has none.
func claimState(claim client.Object, vo *storagev1alpha1.VolumeOwnership) string {
	name := claim.GetNamespace() + "/" + claim.GetName()
	if vo == nil {
		return name + " (no VolumeOwnership)"
	}
	s := orNone(string(vo.Status.Phase))
	if vo.Status.Reason != "" {
		s += ", " + vo.Status.Reason
	}
	return name + " (" + s + ")"
}

// refusal says what target still holds after timeout, its claims (as claimState names them)
// before the others, that nothing was removed, and what lets the target go.
func refusal(target string, timeout time.Duration, claims []string, others holdings) error {
	var what []string
	if len(claims) > 0 {
		what = append(what, plural(len(claims), "claim")+" "+strings.Join(claims, ", "))
	}
	if n := others.count(); n > 0 {
		word := "object"
		if len(claims) > 0 {
			word = "other object"
		}
		what = append(what, fmt.Sprintf("%d %s (%s)", n, plural(n, word), others.summary()))
	}
	return fmt.Errorf("synctarget %q still holds %s after %s; nothing was removed and it stays evicting: "+
		"its syncer lets go of them once it answers; if its member is gone for good, kubectl custody fence %s --powered-off lets its volumes move; "+
		"--force removes it now and leaves its copies in the member", target, strings.Join(what, " and "), timeout, target)
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n != 1 {
		return word + "s"
	}
	return word
}

// located names obj by kindName, and its namespace when it has one.
func located(obj client.Object) string {
	if ns := obj.GetNamespace(); ns != "" {
		return kindName(obj) + " in namespace " + ns
	}
	return kindName(obj)
}

// leftoverWarning warns that the member of target keeps its copies of the objects that
// unjoin --force released, and that the volumes among them are not fenced; "" when it
// released none.
func leftoverWarning(target string, released []metav1.PartialObjectMetadata) string {
	if len(released) == 0 {
		return ""
	}
	w := fmt.Sprintf("Warning: the member of %s keeps its copies of the %d %s released above", target, len(released), plural(len(released), "object"))
	if slices.ContainsFunc(released, isVolume) {
		w += ", and the claims and PVs among them are not fenced: stop their workloads in the member before the volumes are used elsewhere"
	}
	return w
}

// isVolume tells whether obj is a claim or a PV.
func isVolume(obj metav1.PartialObjectMetadata) bool {
	switch obj.GroupVersionKind().GroupKind() {
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}, schema.GroupKind{Kind: "PersistentVolume"}:
		return true
	}
	return false
}
