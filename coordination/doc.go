// Package coordination is the PVC/PV state machine of Custody, pure: it imports no API
// client. The coordination controller reads a hub claim, its hub PV, the targets and the
// VolumeOwnership record, hands them to Decide as an Observation, and carries out the Actions
// of the Decision it gets back, in order, recording the decision on the VolumeOwnership
// first.
//
// A volume is Shared (ReadWriteMany or ReadOnlyMany on network storage: synced, pre-bound, to
// every target of its namespace), Owned (ReadWriteOnce or ReadWriteOncePod on network
// storage: one target at a time) or Internal (its class has no storage domain: it never
// leaves its member without a copy). Its phases and the transitions allowed between them are
// data (Transitions). The machine keeps the invariants:
//
//  1. an owned volume has at most one target in Sync or Upsync;
//  2. no target gets Sync for an owned volume until the previous owner acknowledged the detach
//     (its state labels are gone) or, once it was lost past the fence delay, a Fence cut it
//     off the storage (package fencing), on whose strength coordination clears its labels;
//  3. storage is released only after the hub claim is deleted and every other target is
//     clear, and never when the hub PV says Retain. A target a Fence took the volume from is
//     clear only once that Fence is lifted: its member keeps its copies, attached, until it
//     returns and removes them. The record lists such targets (FencedOff) while their Fence
//     holds, and the owner of a deleted claim keeps it until none is left;
//  4. every downstream copy is Retain while the volume lives (the syncer keeps synced PVs
//     Retain and applies the release policy only when the claim is deleted);
//  5. every decision is a write to the API, so a crash anywhere resumes from what is there.
//
// When a deleted claim's storage is kept (the hub PV says Retain, or no target held the
// volume when the claim went), its hub PV stays as Kubernetes keeps a Released PV: phase
// Released, claimRef naming the claim, annotations naming the target that held it last and
// the storage domain, no finalizer left. No target holds it, so deleting it releases nothing.
//
// Writes. A volume's failover from a fenced owner h to a target n needs at the least five
// writes: one patch of the hub claim and one of the hub PV that take h off and give n Sync,
// the decision on the VolumeOwnership, and n's copies of the claim and the PV in its member.
// The failover benchmark makes exactly these as its floor. The protocol makes more, each for
// a reason:
//
//   - the claim is marked as leaving h when its namespace does (h is not asked to let go
//     while it does not answer: it is asked when it answers again);
//   - n's syncer puts its finalizer on the claim and the PV once their copies exist in its
//     member: the finalizer says so, and a deleted claim is released only through copies
//     that exist;
//   - each phase is recorded before it acts (WaitingForFence before the Fence is requested,
//     Moved, with h fenced off, before the release and the grant, which the record keeps
//     while the new owner holds the volume; the grant records the copy's policy, Retain, as
//     the next pass would, so that the record is not written a third time for it alone);
//   - n's syncer reports the claim's status to the hub, once per change of it in n, but for
//     the times of its member's conditions, for the Pending of a copy its member is still
//     binding or restoring, and for the Unused condition its member has not set yet (the
//     hub claim keeps its own until then, instead of losing it in one report and getting it
//     back in the next).
//
// Releasing h and giving n Sync is one patch of each object: no version of either names
// both, and a crash between the claim's patch and the PV's leaves h on one of them, which
// the Fence, read past the cache before the writes, releases again. A volume that has
// nowhere to go yet is released from h alone (OwnerFenced), and given on later.
//
// A move from an owner h that answers needs, besides those five, h's consent and h's
// deletion of its two copies. Invariant 2 puts h's acknowledgement between the request and
// the grant, so each of the hub claim and PV is patched three times under the label
// protocol: h asked to let go, h's labels off, n given Sync. That makes eleven writes of
// Custody's at the least, where the move benchmark's floor makes seven (it gives n Sync in
// the patch that takes h off); the members' binders add about three (n's PV copy bound to
// its claim copy, the status of each). The rest goes to the reasons above, and to the
// record of Moving (WaitingForDetach) written before h is asked.
//
// A restore from a replica, after an owner h that does not answer, takes the volume from h
// and sets it aside in one step: the patch that drops h from the hub PV also takes off its
// protection finalizer, and the PV is deleted in the same step, so that the restored volume
// may take its name. One step, one record and one PV patch fewer than dropping h first and
// deleting after; an owner that answers is asked to let go first, as in a move. h is dropped
// as soon as it is Unreachable, not once its fence delay passed: the switch of Locations that
// asked for the restore judged h's Location lost (the pair's failover threshold, or an
// admin's declaration), and the volume it held is kept, never released.
//
// A hold (the HoldFinalizer in the claim's per-target coordination finalizers) keeps a claim
// on a target while leaving it would break an invariant: during provisioning, for internal
// volumes, for moves the storage class refuses, and on the owner of a deleted claim until
// its sharers are gone.
package coordination
