package access

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

const (
	// TargetLabel marks the RoleBindings and Roles this package grants, with the key of the
	// target whose syncer they are for.
	TargetLabel = "access.custody.dev/target"
	// NamespaceRole is the ClusterRole of what a syncer does in a namespace placed on its
	// target (config/rbac).
	NamespaceRole = "custody-syncer-namespace"
	// ReplicaRole is the ClusterRole of what a syncer reads in a namespace where its target
	// holds replicas of claims placed elsewhere (config/rbac).
	ReplicaRole = "custody-syncer-replica"
	// Finalizer holds a RoleBinding granted in a namespace until the grant is not wanted any
	// more, though the namespace be deleted.
	Finalizer = "access.custody.dev/grant"
)

// Grants are the ClusterRoles that targets' syncers are bound to in one namespace, by
// target key.
type Grants map[string]string

// NamespaceGrants are the grants in a namespace: NamespaceRole to every target it is placed
// on (Sync or Upsync, leaving or not), ReplicaRole to every other target that a
// VolumeReplication in it is labelled Sync or Upsync for.
func NamespaceGrants(namespace metav1.Object, replications []metav1.Object) Grants {
	g := Grants{}
	for _, vr := range replications {
		for _, key := range synced(vr) {
			g[key] = ReplicaRole
		}
	}
	for _, key := range synced(namespace) {
		g[key] = NamespaceRole
	}
	return g
}

// KeySecrets are the names of the key Secrets of the VolumeReplications labelled Sync or
// Upsync for the target, sorted, each once.
func KeySecrets(key string, replications []metav1.Object, secretOf func(metav1.Object) string) []string {
	var names []string
	for _, vr := range replications {
		if slices.Contains(synced(vr), key) {
			names = append(names, secretOf(vr))
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// synced are the keys of the targets an object is Sync or Upsync on.
func synced(obj metav1.Object) []string {
	var keys []string
	for key, p := range workloadv1alpha1.Presences(obj) {
		if p.Synced() {
			keys = append(keys, key)
		}
	}
	return keys
}
