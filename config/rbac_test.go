package config

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// hubObjects renders config/default, everything Custody installs in the hub.
func hubObjects(t *testing.T) (roles map[string]*rbacv1.ClusterRole, bindings []*rbacv1.ClusterRoleBinding) {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), "default")
	if err != nil {
		t.Fatalf("rendering config/default: %v", err)
	}
	roles = map[string]*rbacv1.ClusterRole{}
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		switch r.GetKind() {
		case "ClusterRole":
			role := &rbacv1.ClusterRole{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, role); err != nil {
				t.Fatal(err)
			}
			roles[role.Name] = role
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, b); err != nil {
				t.Fatal(err)
			}
			bindings = append(bindings, b)
		}
	}
	return roles, bindings
}

// readsCore tells whether a rule lets its subject read a core resource.
func readsCore(rule rbacv1.PolicyRule, resource string) bool {
	return (slices.Contains(rule.APIGroups, "") || slices.Contains(rule.APIGroups, "*")) &&
		(slices.Contains(rule.Resources, resource) || slices.Contains(rule.Resources, "*")) &&
		slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "get" || v == "list" || v == "watch" || v == "*" })
}

// syncerSubject tells whether a subject is, or includes, a syncer's hub identity: the
// ServiceAccounts that join makes in custody-system, or a group they are in.
func syncerSubject(s rbacv1.Subject) bool {
	switch s.Kind {
	case rbacv1.ServiceAccountKind:
		return s.Namespace == workloadv1alpha1.SyncerIdentityNamespace && strings.HasPrefix(s.Name, workloadv1alpha1.SyncerIdentity(""))
	case rbacv1.GroupKind:
		return s.Name == "system:serviceaccounts" || s.Name == "system:serviceaccounts:"+workloadv1alpha1.SyncerIdentityNamespace || s.Name == "system:authenticated"
	}
	return false
}

// TestNoSyncerReadsSecretsClusterWide fails when a syncer's hub identity is bound, cluster-wide,
// to a role that reads Secrets or ConfigMaps: the ClusterRole that join binds to each syncer
// (SyncerHubRole), and every ClusterRoleBinding config/default installs.
func TestNoSyncerReadsSecretsClusterWide(t *testing.T) {
	roles, bindings := hubObjects(t)
	clusterWide := []string{SyncerHubRole}
	for _, b := range bindings {
		if slices.ContainsFunc(b.Subjects, syncerSubject) {
			clusterWide = append(clusterWide, b.RoleRef.Name)
		}
	}
	for _, name := range clusterWide {
		role, ok := roles[name]
		if !ok {
			t.Errorf("config/default has no ClusterRole %s, which syncers are bound to cluster-wide", name)
			continue
		}
		for _, rule := range role.Rules {
			for _, resource := range []string{"secrets", "configmaps"} {
				if readsCore(rule, resource) {
					t.Errorf("ClusterRole %s, bound to syncers cluster-wide, reads %s: %+v", name, resource, rule)
				}
			}
		}
	}
	if t.Failed() {
		return
	}
	// The test can fail: the ClusterRole of what a syncer does in a placed namespace reads both.
	for _, resource := range []string{"secrets", "configmaps"} {
		if !slices.ContainsFunc(roles["custody-syncer-namespace"].Rules, func(r rbacv1.PolicyRule) bool { return readsCore(r, resource) }) {
			t.Errorf("custody-syncer-namespace does not read %s: the check above would pass whatever it is given", resource)
		}
	}
}
