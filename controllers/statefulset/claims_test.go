package statefulset

import (
	"reflect"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

const (
	retain = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	del    = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
)

// web is the Kubernetes documentation's StatefulSet: two replicas, one template "www".
func web(change ...func(*appsv1.StatefulSet)) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "set-uid"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "www"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	for _, c := range change {
		c(s)
	}
	return s
}

func policy(whenScaled, whenDeleted appsv1.PersistentVolumeClaimRetentionPolicyType) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{WhenScaled: whenScaled, WhenDeleted: whenDeleted}
	}
}

func replicas(n int32) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.Replicas = ptr.To(n) }
}

func start(n int32) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: n} }
}

func secondTemplate(s *appsv1.StatefulSet) {
	t := *s.Spec.VolumeClaimTemplates[0].DeepCopy()
	t.Name = "logs"
	t.Labels = map[string]string{"kind": "logs", "app": "overridden"}
	s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, t)
}

// existing is a claim of the namespace, changed by change.
func existing(name string, change ...func(*corev1.PersistentVolumeClaim)) corev1.PersistentVolumeClaim {
	c := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)}}
	for _, ch := range change {
		ch(&c)
	}
	return c
}

func marked(c *corev1.PersistentVolumeClaim) {
	metav1.SetMetaDataAnnotation(&c.ObjectMeta, storagev1alpha1.StatefulSetAnnotation, "web")
}

func ownedBy(uid string, controller bool) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		c.OwnerReferences = append(c.OwnerReferences, metav1.OwnerReference{
			APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: types.UID(uid),
			Controller: ptr.To(controller), BlockOwnerDeletion: ptr.To(controller),
		})
	}
}

func ownedByOther(c *corev1.PersistentVolumeClaim) {
	c.OwnerReferences = append(c.OwnerReferences, metav1.OwnerReference{
		APIVersion: "example.com/v1", Kind: "Database", Name: "db", UID: "db-uid", Controller: ptr.To(true),
	})
}

func deleting(c *corev1.PersistentVolumeClaim) {
	now := metav1.Now()
	c.DeletionTimestamp = &now
}

func on(key string, s workloadv1alpha1.ResourceState, downstream bool) func(*corev1.PersistentVolumeClaim) {
	return func(c *corev1.PersistentVolumeClaim) {
		workloadv1alpha1.SetState(c, key, s)
		if downstream {
			c.Finalizers = append(c.Finalizers, workloadv1alpha1.SyncerFinalizer(key))
		}
	}
}

func names(claims []*corev1.PersistentVolumeClaim) []string {
	out := []string{}
	for _, c := range claims {
		out = append(out, c.Name)
	}
	return out
}

func TestOrdinalOf(t *testing.T) {
	set := web(secondTemplate)
	tests := []struct {
		name    string
		ordinal int
		ok      bool
	}{
		{"www-web-0", 0, true},
		{"logs-web-12", 12, true},
		{"www-web-", 0, false},
		{"www-web-01", 0, false},
		{"www-web--1", 0, false},
		{"www-web-1x", 0, false},
		{"www-other-1", 0, false},
		{"data-web-1", 0, false},
		{"www-web-0-1", 0, false},
	}
	for _, tt := range tests {
		if n, ok := ordinalOf(set, tt.name); n != tt.ordinal || ok != tt.ok {
			t.Errorf("ordinalOf(%q) = %d, %v; want %d, %v", tt.name, n, ok, tt.ordinal, tt.ok)
		}
	}
}

func TestOrdinalRange(t *testing.T) {
	tests := []struct {
		name       string
		set        *appsv1.StatefulSet
		start, end int
	}{
		{"replicas from 0", web(), 0, 2},
		{"ordinals.start", web(start(5), replicas(3)), 5, 8},
		{"no replicas means one", web(func(s *appsv1.StatefulSet) { s.Spec.Replicas = nil }), 0, 1},
		{"zero replicas", web(replicas(0), start(2)), 2, 2},
	}
	for _, tt := range tests {
		if s, e := ordinalRange(tt.set); s != tt.start || e != tt.end {
			t.Errorf("%s: ordinalRange = [%d, %d), want [%d, %d)", tt.name, s, e, tt.start, tt.end)
		}
	}
}

func TestNewClaim(t *testing.T) {
	set := web(secondTemplate, policy(retain, del))
	c := newClaim(set, &set.Spec.VolumeClaimTemplates[1], 3)
	if c.Name != "logs-web-3" || c.Namespace != "ns" {
		t.Fatalf("claim %s/%s, want ns/logs-web-3", c.Namespace, c.Name)
	}
	// The selector's labels win over the template's, as in Kubernetes.
	if want := map[string]string{"kind": "logs", "app": "nginx"}; !reflect.DeepEqual(c.Labels, want) {
		t.Errorf("labels %v, want %v", c.Labels, want)
	}
	if set.Spec.VolumeClaimTemplates[1].Labels["app"] != "overridden" {
		t.Errorf("the template was changed: %v", set.Spec.VolumeClaimTemplates[1].Labels)
	}
	if c.Annotations[storagev1alpha1.StatefulSetAnnotation] != "web" {
		t.Errorf("annotations %v lack the set's mark", c.Annotations)
	}
	if !reflect.DeepEqual(c.Spec, set.Spec.VolumeClaimTemplates[1].Spec) {
		t.Errorf("spec %+v, want the template's", c.Spec)
	}
	want := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "set-uid", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
	if !reflect.DeepEqual(c.OwnerReferences, want) {
		t.Errorf("owner references %+v, want %+v", c.OwnerReferences, want)
	}
}

func TestOwnerRefsFollowWhenDeleted(t *testing.T) {
	for _, tt := range []struct {
		name                    string
		whenScaled, whenDeleted appsv1.PersistentVolumeClaimRetentionPolicyType
		owned                   bool
	}{
		{"Retain, Retain", retain, retain, false},
		{"Retain, Delete", retain, del, true},
		{"Delete, Retain", del, retain, false},
		{"Delete, Delete", del, del, true},
	} {
		set := web(policy(tt.whenScaled, tt.whenDeleted))
		c := newClaim(set, &set.Spec.VolumeClaimTemplates[0], 0)
		if got := len(c.OwnerReferences) == 1; got != tt.owned {
			t.Errorf("%s: owned by the set %v, want %v (%+v)", tt.name, got, tt.owned, c.OwnerReferences)
		}
	}
	if c := newClaim(web(), &web().Spec.VolumeClaimTemplates[0], 0); c.OwnerReferences != nil {
		t.Errorf("an unset policy is Retain: owner references %+v", c.OwnerReferences)
	}
}

func TestPlanClaims(t *testing.T) {
	tests := []struct {
		name    string
		set     *appsv1.StatefulSet
		claims  []corev1.PersistentVolumeClaim
		create  []string
		update  []string
		remove  []string
		inRange []string
	}{
		{
			name:   "a new set: every claim of every ordinal",
			set:    web(secondTemplate, start(5)),
			create: []string{"www-web-5", "logs-web-5", "www-web-6", "logs-web-6"},
		},
		{
			name:    "claims that exist are marked, whoever made them; the others created",
			set:     web(),
			claims:  []corev1.PersistentVolumeClaim{existing("www-web-0"), existing("www-web-1", marked), existing("unrelated")},
			create:  nil,
			update:  []string{"www-web-0"},
			inRange: []string{"www-web-0", "www-web-1"},
		},
		{
			name:    "whenDeleted Delete: the set's controller reference is added",
			set:     web(policy(retain, del)),
			claims:  []corev1.PersistentVolumeClaim{existing("www-web-0", marked), existing("www-web-1", marked, ownedBy("set-uid", true))},
			update:  []string{"www-web-0"},
			inRange: []string{"www-web-0", "www-web-1"},
		},
		{
			name:    "whenDeleted Retain: the set's reference goes; a non-controller one is made right",
			set:     web(policy(retain, retain)),
			claims:  []corev1.PersistentVolumeClaim{existing("www-web-0", marked, ownedBy("set-uid", true)), existing("www-web-1", marked, ownedBy("set-uid", false))},
			update:  []string{"www-web-0", "www-web-1"},
			inRange: []string{"www-web-0", "www-web-1"},
		},
		{
			name: "another controller's claim and an earlier set's are only marked",
			set:  web(policy(retain, del)),
			claims: []corev1.PersistentVolumeClaim{
				existing("www-web-0", marked, ownedByOther), existing("www-web-1", marked, ownedBy("earlier-uid", true)),
			},
			inRange: []string{"www-web-0", "www-web-1"},
		},
		{
			name:    "a claim being deleted waits to be made again",
			set:     web(),
			claims:  []corev1.PersistentVolumeClaim{existing("www-web-0", marked, deleting), existing("www-web-1", marked)},
			inRange: []string{"www-web-1"},
		},
		{
			name: "scaled down with whenScaled Delete: the set's claims out of range go",
			set:  web(replicas(1), start(1), policy(del, retain)),
			claims: []corev1.PersistentVolumeClaim{
				existing("www-web-0", marked), existing("www-web-1", marked), existing("www-web-2", marked), existing("www-web-3"),
				existing("www-web-4", marked, deleting), existing("www-web-5", marked, ownedByOther),
			},
			remove:  []string{"www-web-0", "www-web-2"},
			inRange: []string{"www-web-1"},
		},
		{
			name:    "scaled down with whenScaled Retain: they stay",
			set:     web(replicas(1), policy(retain, del)),
			claims:  []corev1.PersistentVolumeClaim{existing("www-web-0", marked, ownedBy("set-uid", true)), existing("www-web-1", marked, ownedBy("set-uid", true))},
			inRange: []string{"www-web-0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before []corev1.PersistentVolumeClaim
			for i := range tt.claims {
				before = append(before, *tt.claims[i].DeepCopy())
			}
			p := planClaims(tt.set, tt.claims)
			if got := names(p.create); !slices.Equal(got, orEmpty(tt.create)) {
				t.Errorf("create %v, want %v", got, tt.create)
			}
			if got := names(p.update); !slices.Equal(got, orEmpty(tt.update)) {
				t.Errorf("update %v, want %v", got, tt.update)
			}
			if got := names(p.remove); !slices.Equal(got, orEmpty(tt.remove)) {
				t.Errorf("remove %v, want %v", got, tt.remove)
			}
			if got := names(sortedClaims(p.inRange)); !slices.Equal(got, orEmpty(tt.inRange)) {
				t.Errorf("in range %v, want %v", got, tt.inRange)
			}
			if !reflect.DeepEqual(before, tt.claims) {
				t.Errorf("planClaims changed the claims it read")
			}
			for _, c := range p.update {
				if c.Annotations[storagev1alpha1.StatefulSetAnnotation] != "web" {
					t.Errorf("%s: not marked: %v", c.Name, c.Annotations)
				}
				if fixed, changed := adopted(tt.set, c); changed {
					t.Errorf("%s: adopting it again changes it again: %+v", c.Name, fixed.OwnerReferences)
				}
				wantOwned := retention(tt.set).WhenDeleted == del
				if owned := slices.ContainsFunc(c.OwnerReferences, func(r metav1.OwnerReference) bool {
					return r.UID == tt.set.UID && ptr.Deref(r.Controller, false)
				}); owned != wantOwned {
					t.Errorf("%s: controlled by the set %v, want %v", c.Name, owned, wantOwned)
				}
			}
		})
	}
}

func TestPlacement(t *testing.T) {
	sync, upsync, pending := workloadv1alpha1.ResourceStateSync, workloadv1alpha1.ResourceStateUpsync, workloadv1alpha1.ResourceStatePending
	placedSet := func(states map[string]workloadv1alpha1.ResourceState, leaving ...string) *appsv1.StatefulSet {
		s := web()
		for k, st := range states {
			workloadv1alpha1.SetState(s, k, st)
		}
		for _, k := range leaving {
			workloadv1alpha1.RequestRemoval(s, k, metav1.Now().Time)
		}
		return s
	}
	tests := []struct {
		name   string
		set    *appsv1.StatefulSet
		claims []corev1.PersistentVolumeClaim
		ready  []string
		drop   []string
	}{
		{
			name:   "every claim synced and taken up on the target",
			set:    placedSet(map[string]workloadv1alpha1.ResourceState{"a": pending}),
			claims: []corev1.PersistentVolumeClaim{existing("www-web-0", on("a", sync, true)), existing("www-web-1", on("a", upsync, true))},
			ready:  []string{"a"},
		},
		{
			name:   "a claim not yet taken up by the syncer",
			set:    placedSet(map[string]workloadv1alpha1.ResourceState{"a": pending}),
			claims: []corev1.PersistentVolumeClaim{existing("www-web-0", on("a", sync, true)), existing("www-web-1", on("a", sync, false))},
		},
		{
			name:   "a claim still waiting for coordination, and one missing",
			set:    placedSet(map[string]workloadv1alpha1.ResourceState{"a": pending}),
			claims: []corev1.PersistentVolumeClaim{existing("www-web-0", on("a", pending, false))},
		},
		{
			name: "a move: the claims are still on the old target, which the set leaves",
			set:  placedSet(map[string]workloadv1alpha1.ResourceState{"a": sync, "b": pending}, "a"),
			claims: []corev1.PersistentVolumeClaim{
				existing("www-web-0", on("a", sync, true)), existing("www-web-1", on("a", sync, true), on("b", pending, false)),
			},
		},
		{
			name: "a move: the claims came to the new target",
			set:  placedSet(map[string]workloadv1alpha1.ResourceState{"b": pending}),
			claims: []corev1.PersistentVolumeClaim{
				existing("www-web-0", on("b", sync, true)), existing("www-web-1", on("b", sync, true)),
			},
			ready: []string{"b"},
		},
		{
			name:   "a target left before the set was synced there: its empty state goes",
			set:    placedSet(map[string]workloadv1alpha1.ResourceState{"a": sync, "b": pending}, "b"),
			claims: []corev1.PersistentVolumeClaim{existing("www-web-0", on("a", sync, true)), existing("www-web-1", on("a", sync, true))},
			drop:   []string{"b"},
		},
		{
			name: "a set with no replicas goes at once",
			set: func() *appsv1.StatefulSet {
				s := placedSet(map[string]workloadv1alpha1.ResourceState{"a": pending})
				s.Spec.Replicas = ptr.To[int32](0)
				return s
			}(),
			ready: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.claims {
				marked(&tt.claims[i])
			}
			ready, drop := placement(tt.set, planClaims(tt.set, tt.claims))
			if !slices.Equal(orEmpty(ready), orEmpty(tt.ready)) || !slices.Equal(orEmpty(drop), orEmpty(tt.drop)) {
				t.Fatalf("placement = ready %v, drop %v; want ready %v, drop %v", ready, drop, tt.ready, tt.drop)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
