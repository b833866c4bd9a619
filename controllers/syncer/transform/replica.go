package transform

import (
	"errors"
	"maps"
	"slices"
	"strings"

	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// A claim restored from a replica that another namespace's replication keeps cannot name it
// as its data source: cross-namespace data sources are alpha in Kubernetes. The syncer
// imports the replica's storage snapshot into the claim's namespace instead, as with any CSI
// driver: a pre-provisioned VolumeSnapshotContent (Retain) with the replica's snapshot handle,
// and a VolumeSnapshot bound to it, which the copy names. The replica is held from VolSync's
// rotation meanwhile; once the copy is bound, the import goes, the storage snapshot stays
// (Retain), and the replica is given back (GiveBack).
const (
	// ReplicaAnnotation on a VolumeSnapshot the syncer imported names the replica it imports,
	// as "namespace/name" in the member.
	ReplicaAnnotation = "workload.custody.dev/replica"
	// HoldersAnnotation on a replica lists, comma-separated, the imports (ImportName) that
	// hold it from VolSync's rotation.
	HoldersAnnotation = "workload.custody.dev/held-for"
	// KeptBeforeAnnotation on a replica says that it carried KeepLabel before the first import
	// held it: the label is someone else's, and stays when the last import lets go.
	KeptBeforeAnnotation = "workload.custody.dev/kept-before"
)

// snapshotGroup is the API group of VolumeSnapshots.
const snapshotGroup = "snapshot.storage.k8s.io"

// ReplicaOf is where the replica the hub claim asks this target to restore it from is in
// the member; imported is true when it is in another namespace's downstream namespace, and
// name is empty when the claim asks for no replica here.
func (t Target) ReplicaOf(up metav1.Object) (key types.NamespacedName, imported bool) {
	ns, name := storagev1alpha1.ReplicaIn(t.Replica(up))
	if name == "" {
		return key, false
	}
	if ns == "" {
		return types.NamespacedName{Namespace: t.Namespace(up.GetNamespace()), Name: name}, false
	}
	return types.NamespacedName{Namespace: t.Namespace(ns), Name: name}, true
}

// RestoreSource is the VolumeSnapshot, in the copy's namespace, that the claim's copy is
// made from: the replica, or the snapshot the syncer imports a replica of another namespace
// as; empty when the claim asks for no restore here.
func (t Target) RestoreSource(up metav1.Object) string {
	replica, imported := t.ReplicaOf(up)
	if imported {
		return t.ImportName(up.GetUID())
	}
	return replica.Name
}

// ImportName names the VolumeSnapshotContent and the VolumeSnapshot through which the hub
// claim with this UID imports a replica of another namespace.
func (t Target) ImportName(claim types.UID) string {
	return namePrefix + t.hash("import", string(claim))
}

// ImportOf names the VolumeSnapshot a claim's copy may have imported its replica as: the one
// the copy's data source names, else, with no copy, the one the hub claim up asks for. ok is
// false when there can be none; what it names may be the replica itself, which the syncer
// did not make (see Owns).
func (t Target) ImportOf(up, down *unstructured.Unstructured) (key types.NamespacedName, ok bool) {
	if down != nil {
		ref, _, _ := unstructured.NestedStringMap(down.Object, "spec", "dataSourceRef")
		return types.NamespacedName{Namespace: down.GetNamespace(), Name: ref["name"]},
			ref["kind"] == "VolumeSnapshot" && ref["apiGroup"] == snapshotGroup && ref["name"] != ""
	}
	if up == nil {
		return key, false
	}
	if _, imported := t.ReplicaOf(up); !imported {
		return key, false
	}
	return types.NamespacedName{Namespace: t.DownstreamNamespace(up), Name: t.ImportName(up.GetUID())}, true
}

// ErrReplicaNotCut: the replica has no snapshot handle yet to import.
var ErrReplicaNotCut = errors.New("the replica's storage snapshot is not cut yet")

// Import returns the VolumeSnapshotContent and the VolumeSnapshot through which the hub claim
// up imports replica, whose content is content: a pre-provisioned content of the replica's
// snapshot handle (its status's, as a CSI snapshotter reports it, else the one a
// pre-provisioned content names), driver and class, Retain, bound to a VolumeSnapshot of
// the same name in the claim's downstream namespace.
func (t Target) Import(up metav1.Object, replica *snapshotv1.VolumeSnapshot, content *snapshotv1.VolumeSnapshotContent) (*snapshotv1.VolumeSnapshotContent, *snapshotv1.VolumeSnapshot, error) {
	handle := ""
	if content.Status != nil {
		handle = ptr.Deref(content.Status.SnapshotHandle, "")
	}
	if handle == "" {
		handle = ptr.Deref(content.Spec.Source.SnapshotHandle, "")
	}
	if handle == "" {
		return nil, nil, ErrReplicaNotCut
	}
	name, ns := t.ImportName(up.GetUID()), t.Namespace(up.GetNamespace())
	back := map[string]string{HubNamespaceAnnotation: up.GetNamespace(), HubNameAnnotation: up.GetName()}
	imported := &snapshotv1.VolumeSnapshotContent{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: t.Markers(), Annotations: back},
		Spec: snapshotv1.VolumeSnapshotContentSpec{
			Driver:                  content.Spec.Driver,
			VolumeSnapshotClassName: content.Spec.VolumeSnapshotClassName,
			DeletionPolicy:          snapshotv1.VolumeSnapshotContentRetain,
			Source:                  snapshotv1.VolumeSnapshotContentSource{SnapshotHandle: &handle},
			SourceVolumeMode:        content.Spec.SourceVolumeMode,
			VolumeSnapshotRef:       corev1.ObjectReference{Kind: "VolumeSnapshot", APIVersion: snapshotv1.SchemeGroupVersion.String(), Namespace: ns, Name: name},
		},
	}
	snapAnnotations := maps.Clone(back)
	snapAnnotations[ReplicaAnnotation] = replica.Namespace + "/" + replica.Name
	snap := &snapshotv1.VolumeSnapshot{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: t.Markers(), Annotations: snapAnnotations},
		Spec: snapshotv1.VolumeSnapshotSpec{
			Source:                  snapshotv1.VolumeSnapshotSource{VolumeSnapshotContentName: &name},
			VolumeSnapshotClassName: content.Spec.VolumeSnapshotClassName,
		},
	}
	return imported, snap, nil
}

// ImportedReplica is the replica a VolumeSnapshot the syncer imported stands for.
func ImportedReplica(imported metav1.Object) (types.NamespacedName, bool) {
	v, _ := Annotation(imported, ReplicaAnnotation)
	ns, name, ok := strings.Cut(v, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, ok && name != ""
}

// Hold holds replica from VolSync's rotation for the import called name: KeepLabel, and
// name among its holders. It tells whether replica changed.
func Hold(replica *snapshotv1.VolumeSnapshot, name string) bool {
	holders := holdersOf(replica)
	_, kept := replica.Labels[KeepLabel]
	if kept && slices.Contains(holders, name) {
		return false
	}
	if kept && len(holders) == 0 {
		metav1.SetMetaDataAnnotation(&replica.ObjectMeta, KeptBeforeAnnotation, "true")
	}
	metav1.SetMetaDataLabel(&replica.ObjectMeta, KeepLabel, "true")
	if !slices.Contains(holders, name) {
		metav1.SetMetaDataAnnotation(&replica.ObjectMeta, HoldersAnnotation, strings.Join(append(holders, name), ","))
	}
	return true
}

// GiveBack lets go of replica for the import called name, and tells what becomes of it:
// changed when it is to be written, gone when it is to be deleted instead. The last import
// to let go gives it back as it found it: KeepLabel stays if the replica carried it before
// (KeptBeforeAnnotation) or a claim of its own namespace owns it (a failover restore there
// keeps it so); else it goes while VolSync owns the replica (a ReplicationDestination),
// which rotates it as any image; and a replica that VolSync already gave up (no owner left)
// is deleted, as nobody else would.
func GiveBack(replica *snapshotv1.VolumeSnapshot, name string) (changed, gone bool) {
	holders := holdersOf(replica)
	if !slices.Contains(holders, name) {
		return false, false
	}
	holders = slices.DeleteFunc(holders, func(h string) bool { return h == name })
	if len(holders) > 0 {
		metav1.SetMetaDataAnnotation(&replica.ObjectMeta, HoldersAnnotation, strings.Join(holders, ","))
		return true, false
	}
	delete(replica.Annotations, HoldersAnnotation)
	if _, before := replica.Annotations[KeptBeforeAnnotation]; before {
		delete(replica.Annotations, KeptBeforeAnnotation)
		return true, false
	}
	owned := func(kind string) bool {
		return slices.ContainsFunc(replica.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == kind })
	}
	switch {
	case owned("PersistentVolumeClaim"):
	case owned("ReplicationDestination"):
		delete(replica.Labels, KeepLabel)
	case len(replica.OwnerReferences) == 0:
		return false, true
	}
	return true, false
}

// holdersOf lists the imports that hold replica.
func holdersOf(replica *snapshotv1.VolumeSnapshot) []string {
	v := replica.Annotations[HoldersAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}
