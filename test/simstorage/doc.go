// Package simstorage simulates a storage system for the test bed and the local environment:
// one Storage per storage domain stands in for a CSI driver plus the array behind it, shared
// by every member attached to the domain.
//
// In each attached member it provisions a PV for every PVC whose StorageClass names the
// domain's provisioner, attaches a volume to the member while the member has its PV Bound
// and detaches it when the member lets go, and deletes the backing volume when a PV with
// reclaimPolicy Delete is released. Attaching is a step the storage takes, serialized in its
// ledger: an owned volume attached to one member is refused to any other, and the PV keeps
// the attacher's finalizer while attached, as with a real CSI attacher, so a member's API
// server never shows a PV gone that the storage still has attached.
//
// It also plays csi-addons: each member gets a NetworkFenceClass named after the domain, and
// the driver executes the member's NetworkFences of that class on the storage, reporting
// status.result and status.message as the csi-addons controller does; deleting one does not
// unfence. It answers GetFenceClients as csi-addons shows the answer: a CSIAddonsNode of the
// driver in each member, whose status.networkFenceClientStatus gives, for the domain's
// class, the member's node CIDRs as its clients, or what a test set (ReportFenceClients). A
// member is fenced while one of its node CIDRs lies within a fenced CIDR. A fenced
// member cannot attach, its writes are refused, and its attachments no longer keep an owned
// volume from another member; unfencing it while it still has such a volume attached beside
// another member is a violation. Tests may make fencing and volume operations (provisioning,
// attaching, detaching, releasing) fail or slow at run time, and say that a member's nodes
// are powered off, which cuts it off as a fence does.
//
// VolSync plays VolSync's rsync-TLS movers and a CSI snapshotter in the members it is
// attached to, across domains: a ReplicationSource syncs on VolSync's triggers to the
// ReplicationDestination its address names, copying the source volume's log into the
// destination's volume and cutting a VolumeSnapshot of it that becomes ready, and both report
// as VolSync does. It plays the snapshot controller and the CSI snapshotter too: the storage
// keeps each snapshot it cut under its handle, which the VolumeSnapshotContent it makes for
// the VolumeSnapshot reports; a pre-provisioned VolumeSnapshot (source.volumeSnapshotContentName)
// binds to its content once the content names it back, and is ready once the storage has the
// snapshot of the content's handle. Deleting a content Delete deletes the storage snapshot;
// Retain keeps it. A claim whose dataSourceRef is a ready VolumeSnapshot of the domain's
// driver is provisioned with the log of the storage snapshot its content names; one whose
// storage snapshot is gone fails to provision, with a warning event, as with a real driver.
// Tests may make syncs fail or slow.
//
// Write stands in for a workload's writes: an acknowledged write lands in the volume's log,
// which goes with the backing volume. The ledger records every refusal and every step that
// breaks an invariant (a second owner, a release while in use, a member unfenced beside
// another holder, an acknowledged write lost), so that tests use it as the oracle.
//
// It is a test and development part: no production code imports it.
package simstorage
