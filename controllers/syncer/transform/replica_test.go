package transform

import (
	"strings"
	"testing"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// restoredClaim is a hub claim of namespace drill asking to be restored as annotation says.
func restoredClaim(t *testing.T, annotation string) *unstructured.Unstructured {
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "drill", Name: "data", UID: "claim-uid",
		Annotations: map[string]string{storagev1alpha1.RestoreAnnotation: annotation}}}
	return toUnstructured(t, claim, "v1", "PersistentVolumeClaim")
}

func TestReplicaOf(t *testing.T) {
	imported := target.ImportName("claim-uid")
	for _, tc := range []struct {
		annotation   string
		want         types.NamespacedName
		wantImported bool
		wantSource   string
	}{
		{"m1/snap-1", types.NamespacedName{Namespace: target.Namespace("drill"), Name: "snap-1"}, false, "snap-1"},
		{"m1/shop/snap-1", types.NamespacedName{Namespace: target.Namespace("shop"), Name: "snap-1"}, true, imported},
		{"m2/shop/snap-1", types.NamespacedName{}, false, ""}, // another target's replica
		{"m1/", types.NamespacedName{}, false, ""},
	} {
		up := restoredClaim(t, tc.annotation)
		got, gotImported := target.ReplicaOf(up)
		if got != tc.want || gotImported != tc.wantImported {
			t.Errorf("%q: ReplicaOf = %v, %v; want %v, %v", tc.annotation, got, gotImported, tc.want, tc.wantImported)
		}
		if source := target.RestoreSource(up); source != tc.wantSource {
			t.Errorf("%q: RestoreSource = %q, want %q", tc.annotation, source, tc.wantSource)
		}
		down, err := target.Downstream(up, Inputs{})
		if err != nil {
			t.Fatal(err)
		}
		if name, _, _ := unstructured.NestedString(down.Object, "spec", "dataSourceRef", "name"); name != tc.wantSource {
			t.Errorf("%q: the copy's dataSourceRef names %q, want %q", tc.annotation, name, tc.wantSource)
		}
	}
	if !strings.HasPrefix(imported, namePrefix) || !dnsLabel.MatchString(imported) || imported == target.ImportName("other-uid") {
		t.Errorf("ImportName %q is not a name of the syncer's, one per claim", imported)
	}
}

func TestImportOf(t *testing.T) {
	ref := func(kind, group, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"namespace": "down", "name": "data"},
			"spec":     map[string]any{"dataSourceRef": map[string]any{"kind": kind, "apiGroup": group, "name": name}},
		}}
	}
	for _, tc := range []struct {
		name     string
		up, down *unstructured.Unstructured
		want     types.NamespacedName
		ok       bool
	}{
		{"the snapshot the copy names", nil, ref("VolumeSnapshot", "snapshot.storage.k8s.io", "custody-x"), types.NamespacedName{Namespace: "down", Name: "custody-x"}, true},
		{"a copy made from a claim", nil, ref("PersistentVolumeClaim", "", "other"), types.NamespacedName{Namespace: "down", Name: "other"}, false},
		{"a copy made from nothing", nil, &unstructured.Unstructured{Object: map[string]any{}}, types.NamespacedName{}, false},
		{"no copy yet, a replica of another namespace", restoredClaim(t, "m1/shop/snap-1"), nil,
			types.NamespacedName{Namespace: target.Namespace("drill"), Name: target.ImportName("claim-uid")}, true},
		{"no copy yet, a replica of the claim's namespace", restoredClaim(t, "m1/snap-1"), nil, types.NamespacedName{}, false},
		{"neither", nil, nil, types.NamespacedName{}, false},
	} {
		if got, ok := target.ImportOf(tc.up, tc.down); got != tc.want || ok != tc.ok {
			t.Errorf("%s: ImportOf = %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestImport(t *testing.T) {
	up := restoredClaim(t, "m1/shop/snap-1")
	replica := &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Namespace: target.Namespace("shop"), Name: "snap-1"}}
	origin := func(status, spec string) *snapshotv1.VolumeSnapshotContent {
		c := &snapshotv1.VolumeSnapshotContent{Spec: snapshotv1.VolumeSnapshotContentSpec{
			Driver: "csi.example", VolumeSnapshotClassName: ptr.To("gold"), DeletionPolicy: snapshotv1.VolumeSnapshotContentDelete,
			Source: snapshotv1.VolumeSnapshotContentSource{VolumeHandle: ptr.To("vol-1")},
		}}
		if spec != "" {
			c.Spec.Source = snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: &spec}
		}
		if status != "" {
			c.Status = &snapshotv1.VolumeSnapshotContentStatus{SnapshotHandle: &status}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		content *snapshotv1.VolumeSnapshotContent
		want    string
	}{
		{"a dynamic snapshot's handle, from its status", origin("snap-h1", ""), "snap-h1"},
		{"a pre-provisioned snapshot's, from its spec", origin("", "snap-h2"), "snap-h2"},
		{"none yet", origin("", ""), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, snap, err := target.Import(up, replica, tc.content)
			if tc.want == "" {
				if err != ErrReplicaNotCut {
					t.Fatalf("Import of a replica with no handle: %v, want ErrReplicaNotCut", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name := target.ImportName("claim-uid")
			switch {
			case content.Name != name || ptr.Deref(content.Spec.Source.SnapshotHandle, "") != tc.want || content.Spec.Source.VolumeHandle != nil:
				t.Errorf("content %s imports %+v, want %s importing handle %s", content.Name, content.Spec.Source, name, tc.want)
			case content.Spec.DeletionPolicy != snapshotv1.VolumeSnapshotContentRetain:
				t.Errorf("the imported content is %s: deleting it would delete the replica's storage snapshot", content.Spec.DeletionPolicy)
			case content.Spec.Driver != "csi.example" || ptr.Deref(content.Spec.VolumeSnapshotClassName, "") != "gold":
				t.Errorf("the imported content has driver %s and class %v, not the replica's", content.Spec.Driver, content.Spec.VolumeSnapshotClassName)
			case content.Spec.VolumeSnapshotRef.Namespace != target.Namespace("drill") || content.Spec.VolumeSnapshotRef.Name != name:
				t.Errorf("the imported content is for %v, want %s in the claim's namespace", content.Spec.VolumeSnapshotRef, name)
			case snap.Namespace != target.Namespace("drill") || snap.Name != name || ptr.Deref(snap.Spec.Source.VolumeSnapshotContentName, "") != name:
				t.Errorf("the imported snapshot %s/%s names content %v, want %s", snap.Namespace, snap.Name, snap.Spec.Source.VolumeSnapshotContentName, name)
			case !target.Owns(content) || !target.Owns(snap):
				t.Error("the import is not marked as the syncer's")
			}
			if got, ok := ImportedReplica(snap); !ok || got != (types.NamespacedName{Namespace: replica.Namespace, Name: replica.Name}) {
				t.Errorf("the imported snapshot stands for %v (%v), want the replica", got, ok)
			}
		})
	}
}

// TestHoldAndGiveBack: a replica held by imports is given back by the last one as it was
// found: still labelled when it was before or a claim of its namespace owns it, unlabelled
// while VolSync owns it, deleted once VolSync gave it up.
func TestHoldAndGiveBack(t *testing.T) {
	owner := func(kind string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: "x", UID: "u"}}
	}
	for _, tc := range []struct {
		name        string
		labelled    bool
		owners      []metav1.OwnerReference
		holders     []string // who holds it, in order; the first lets go
		wantLabel   bool
		wantDeleted bool
	}{
		{name: "VolSync owns it: unlabelled", owners: owner("ReplicationDestination"), holders: []string{"a"}},
		{name: "VolSync gave it up: deleted", holders: []string{"a"}, wantDeleted: true},
		{name: "a failover restore of its namespace owns it: kept", owners: append(owner("ReplicationDestination"), owner("PersistentVolumeClaim")...),
			holders: []string{"a"}, wantLabel: true},
		{name: "labelled before it was held: kept", labelled: true, owners: owner("ReplicationDestination"), holders: []string{"a"}, wantLabel: true},
		{name: "labelled before, given up since: kept", labelled: true, holders: []string{"a"}, wantLabel: true},
		{name: "two holders: the last lets go", owners: owner("ReplicationDestination"), holders: []string{"a", "b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			replica := &snapshotv1.VolumeSnapshot{ObjectMeta: metav1.ObjectMeta{Name: "snap-1", OwnerReferences: tc.owners}}
			if tc.labelled {
				replica.Labels = map[string]string{KeepLabel: "true"}
			}
			for _, h := range tc.holders {
				if !Hold(replica, h) {
					t.Fatalf("holding for %s changed nothing", h)
				}
				if Hold(replica, h) {
					t.Fatalf("holding for %s twice changed it again", h)
				}
				if _, kept := replica.Labels[KeepLabel]; !kept {
					t.Fatalf("held for %s, it is not labelled for VolSync to keep it", h)
				}
			}
			if changed, gone := GiveBack(replica, "nobody"); changed || gone {
				t.Fatal("an import that does not hold it gave it back")
			}
			var changed, gone bool
			for i, h := range tc.holders {
				changed, gone = GiveBack(replica, h)
				if i < len(tc.holders)-1 {
					if !changed || gone {
						t.Fatalf("%s let go: changed %v, gone %v; want its hold dropped only", h, changed, gone)
					}
					if _, kept := replica.Labels[KeepLabel]; !kept {
						t.Fatalf("%s let go while others hold it, and it lost the label", h)
					}
				}
			}
			if gone != tc.wantDeleted || changed == tc.wantDeleted {
				t.Fatalf("the last let go: changed %v, gone %v; want deleted %v", changed, gone, tc.wantDeleted)
			}
			if _, kept := replica.Labels[KeepLabel]; !gone && kept != tc.wantLabel {
				t.Errorf("labelled %v after it was given back, want %v", kept, tc.wantLabel)
			}
			if len(replica.Annotations) != 0 {
				t.Errorf("annotations left after it was given back: %v", replica.Annotations)
			}
			if changed, gone := GiveBack(replica, tc.holders[0]); changed || gone {
				t.Error("given back twice")
			}
		})
	}
}
