package app

import (
	"slices"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// owned sets owner as obj's owner.
func owned(obj, owner *unstructured.Unstructured) *unstructured.Unstructured {
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), metav1.OwnerReference{
		APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
	}))
	return obj
}

// boundPV is a PV whose claimRef names the claim.
func boundPV(name string, claim *unstructured.Unstructured) *unstructured.Unstructured {
	pv := object("v1", "PersistentVolume", "", name, "pv-"+string(claim.GetUID()))
	_ = unstructured.SetNestedMap(pv.Object, map[string]any{
		"kind": "PersistentVolumeClaim", "namespace": claim.GetNamespace(), "name": claim.GetName(), "uid": string(claim.GetUID()),
	}, "spec", "claimRef")
	return pv
}

func TestRestoreOrderPutsWhatIsNeededFirst(t *testing.T) {
	ns := object("v1", "Namespace", "", "shop", "ns")
	pair := object("scheduling.custody.dev/v1alpha1", "LocationPair", "", "shop", "pair")
	set := object("apps/v1", "StatefulSet", "shop", "web", "set")
	claim := owned(object("v1", "PersistentVolumeClaim", "shop", "www-web-0", "claim"), set)
	record := owned(object("storage.custody.dev/v1alpha1", "VolumeOwnership", "shop", "www-web-0", "vo"), claim)
	key := owned(object("v1", "Secret", "custody-system", "custody-pair-shop", "key"), pair)
	pv := boundPV("pvc-claim", claim)
	target := object("workload.custody.dev/v1alpha1", "SyncTarget", "", "m1", "target")
	// An owner that comes later in the default order: a ConfigMap owned by a claim.
	cm := owned(object("v1", "ConfigMap", "shop", "a", "cm"), claim)

	got, err := restoreOrder([]*unstructured.Unstructured{pv, record, claim, key, set, ns, pair, target, cm})
	if err != nil {
		t.Fatal(err)
	}
	at := func(o *unstructured.Unstructured) int { return slices.Index(got, o) }
	for _, before := range [][2]*unstructured.Unstructured{
		{target, ns}, {pair, ns}, {ns, set}, {set, claim}, {claim, record}, {claim, pv}, {pair, key}, {claim, cm},
	} {
		if at(before[0]) > at(before[1]) {
			t.Errorf("%s comes after %s", describe(before[0]), describe(before[1]))
		}
	}
	if len(got) != 9 {
		t.Errorf("%d objects out of 9", len(got))
	}
}

func TestRestoreOrderRefusesACycle(t *testing.T) {
	a := object("v1", "ConfigMap", "x", "a", "a")
	b := owned(object("v1", "ConfigMap", "x", "b", "b"), a)
	owned(a, b)
	if _, err := restoreOrder([]*unstructured.Unstructured{a, b}); err == nil {
		t.Error("a cycle of owners was ordered")
	}
}

func TestRemapPointsReferencesAtTheNewUIDs(t *testing.T) {
	set := object("apps/v1", "StatefulSet", "shop", "web", "set")
	gone := object("apps/v1", "Deployment", "shop", "gone", "gone")
	claim := owned(owned(object("v1", "PersistentVolumeClaim", "shop", "www-web-0", "claim"), set), gone)
	uids := map[types.UID]types.UID{"set": "set-2", "claim": "claim-2"}

	dropped := remap(claim, uids)
	refs := claim.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != "set-2" || !slices.Equal(dropped, []string{"owner deployment/gone"}) {
		t.Errorf("owners %+v, dropped %v", refs, dropped)
	}
	pv := boundPV("pvc-claim", claim)
	if dropped := remap(pv, uids); len(dropped) != 0 {
		t.Errorf("dropped %v", dropped)
	}
	if uid, _, _ := unstructured.NestedString(pv.Object, "spec", "claimRef", "uid"); uid != "claim-2" {
		t.Errorf("claimRef uid %q, want claim-2", uid)
	}
	orphan := boundPV("pvc-other", object("v1", "PersistentVolumeClaim", "shop", "other", "other"))
	if dropped := remap(orphan, uids); !slices.Equal(dropped, []string{"claimRef uid"}) {
		t.Errorf("dropped %v", dropped)
	}
	if _, found, _ := unstructured.NestedString(orphan.Object, "spec", "claimRef", "uid"); found {
		t.Error("the claimRef of a claim not restored kept its old uid")
	}
}

func TestLeaseHeld(t *testing.T) {
	now := time.Now()
	lease := func(holder string, renewed time.Duration) *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			RenewTime: &metav1.MicroTime{Time: now.Add(-renewed)},
		}}
	}
	if !leaseHeld(lease("c-1", 5*time.Second), now) {
		t.Error("a Lease renewed 5s ago for 15s is not held")
	}
	if leaseHeld(lease("c-1", time.Minute), now) || leaseHeld(lease("", 0), now) || leaseHeld(&coordinationv1.Lease{}, now) {
		t.Error("an expired, released or empty Lease is held")
	}
}
