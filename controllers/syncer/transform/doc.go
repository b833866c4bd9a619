// Package transform is the syncer's pure logic: how a hub object becomes its downstream copy
// in one member and how a member's PV becomes a hub PV. It names downstream namespaces and
// PVs, strips what must not cross (the protocol's labels and annotations, the fields a
// member's PV binder owns, addresses a cluster allocates), rewrites the mutual references of
// PVCs and PVs, merges a target's node selector and tolerations into pod templates, and
// tells whether a downstream object already matches. It builds the import of a replica of
// another namespace that a claim is restored from (a pre-provisioned VolumeSnapshot and its
// content) and decides how the replica is held from VolSync's rotation and given back. It
// reads the protocol's labels and annotations on a hub object for one target (state,
// removal, holds, status reporter), and holds the syncer's vocabulary: the labels and
// annotations it puts on what it makes in a member, and the kinds it treats specially.
//
// It makes no API call and imports no client: the syncer's controllers feed it what they
// read, and package syncio (controllers/syncer/internal/syncio) does the reads and writes
// they share.
package transform
