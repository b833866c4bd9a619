package syncio

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// Clients are how a syncer's controllers reach the hub and the member.
type Clients struct {
	// Hub reads the hub through the syncer's cache, which holds only the objects labelled
	// Sync or Upsync for the target, and writes to the hub.
	Hub client.Client
	// HubReader reads the hub directly, for objects the cache does not hold.
	HubReader client.Reader
	// Member reads the member through the syncer's cache, which holds the objects the syncer
	// created and every PV, and writes to the member.
	Member client.Client
	// MemberReader reads the member directly, for objects the cache does not hold.
	MemberReader client.Reader
	// SameHub confirms, before a removal or an unfence in the member, that the hub is still
	// the one the syncer started with.
	SameHub *HubCheck
}

// Read reads the object of the kind from the cache, and, when the cache does not hold it and
// direct is not nil, from direct: a cache of the syncer's holds only the objects labelled for
// its target. It returns nil when the object does not exist, or is not the syncer's to read.
func Read(ctx context.Context, cached, direct client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey) (*unstructured.Unstructured, error) {
	obj := transform.Empty(gvk)
	err := cached.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) && direct != nil {
		err = direct.Get(ctx, key, obj)
	}
	if Absent(err) {
		return nil, nil
	}
	return obj, err
}

// Absent tells whether a read's error says that the object is not there for the syncer: not
// found, or in a hub namespace where its identity may not read, which is then not placed on
// its target (package access grants the reads).
func Absent(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsForbidden(err)
}

// EnsureNamespace creates the downstream namespace of a hub namespace when it is missing, and
// tells whether it did. When the hub namespace itself is synced, the namespace's downsync
// fills in its labels and annotations.
func EnsureNamespace(ctx context.Context, c Clients, t transform.Target, hubNamespace string) (bool, error) {
	name := t.Namespace(hubNamespace)
	ns, err := Read(ctx, c.Member, c.MemberReader, transform.NamespaceGVK, client.ObjectKey{Name: name})
	switch {
	case err != nil:
		return false, err
	case ns == nil:
		stub := transform.Empty(transform.NamespaceGVK)
		stub.SetName(hubNamespace)
		desired, err := t.Downstream(stub, transform.Inputs{})
		if err != nil {
			return false, err
		}
		if err := c.Member.Apply(ctx, client.ApplyConfigurationFromUnstructured(desired), client.FieldOwner(transform.FieldManager), client.ForceOwnership); err != nil {
			return false, err
		}
		ctrl.LoggerFrom(ctx).Info("Created downstream namespace", "downstreamNamespace", name, "hubNamespace", hubNamespace)
		return true, nil
	case !t.Owns(ns):
		return false, fmt.Errorf("downstream namespace %s exists and was not created by the syncer", name)
	case ns.GetDeletionTimestamp() != nil:
		return false, fmt.Errorf("downstream namespace %s is terminating; it is created again once gone", name)
	}
	return false, nil
}

// QuiesceAsked tells whether a relocate quiesced the hub namespace called name, which the
// syncer reads from its cache, else directly: its workloads are not to run.
func QuiesceAsked(ctx context.Context, cached, direct client.Reader, name string) (bool, *unstructured.Unstructured, error) {
	ns, err := Read(ctx, cached, direct, transform.NamespaceGVK, client.ObjectKey{Name: name})
	if err != nil || ns == nil {
		return false, nil, err
	}
	return ns.GetAnnotations()[schedulingv1alpha1.QuiesceAnnotation] != "", ns, nil
}
