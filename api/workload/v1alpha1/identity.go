package v1alpha1

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SyncerIdentityNamespace is the hub namespace of the syncers' ServiceAccounts, which
// `kubectl custody join` makes, one per SyncTarget.
const SyncerIdentityNamespace = "custody-system"

// SyncerIdentity names the hub ServiceAccount of the syncer of the SyncTarget whose key is
// key, in SyncerIdentityNamespace. The admission policy custody-syncer-target reads the
// target's key back from it, which is why a joined target's name is its key. The prefix
// keeps it apart from the identities config/ ships, whatever the target's name.
func SyncerIdentity(key string) string { return "custody-syncer-target-" + key }

// A hub's identity is the UID of its kube-system namespace, unless the ConfigMap
// HubIdentityConfigMap in SyncerIdentityNamespace holds another under HubIdentityKey: a hub
// restored from an export (`kubectl custody hub import`) keeps the identity of the hub it was
// exported from there, as its own kube-system namespace is new. Every syncer names what it
// makes in its member after the identity, so a restored hub is the same hub to them.
const (
	HubIdentityConfigMap = "custody-hub-identity"
	HubIdentityKey       = "identity"
)

// HubRestoringAnnotation on HubIdentityConfigMap says that an import is restoring the hub's
// objects, since the time it holds: until it goes, the hub does not yet hold all it will, an
// object missing there may be one still to come, and no syncer removes anything from its
// member.
const HubRestoringAnnotation = "workload.custody.dev/restoring"

// ReadHubIdentity reads the identity of the hub that c reads: the one HubIdentityConfigMap
// holds, else the UID of kube-system. A reader that may not read the ConfigMap (a syncer
// identity made before it existed) takes kube-system's UID, as before.
func ReadHubIdentity(ctx context.Context, c client.Reader) (string, error) {
	id, _, err := ReadHubState(ctx, c)
	return id, err
}

// ReadHubState reads the hub's identity as ReadHubIdentity does, and since when an import has
// been restoring its objects (HubRestoringAnnotation), "" when none is.
func ReadHubState(ctx context.Context, c client.Reader) (id, restoringSince string, err error) {
	cm := &corev1.ConfigMap{}
	err = c.Get(ctx, client.ObjectKey{Namespace: SyncerIdentityNamespace, Name: HubIdentityConfigMap}, cm)
	switch {
	case err == nil && cm.Data[HubIdentityKey] != "":
		return cm.Data[HubIdentityKey], cm.Annotations[HubRestoringAnnotation], nil
	case err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err):
		return "", "", fmt.Errorf("reading the hub's identity: %w", err)
	}
	ns := &corev1.Namespace{}
	if err := c.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", "", fmt.Errorf("reading the hub's identity: %w", err)
	}
	return string(ns.UID), "", nil
}
