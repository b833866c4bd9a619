// Package upsync is the syncer's controller for the PVs a member provisions. When the
// downstream copy of a hub claim that the syncer created is Bound to a PV the member made
// (its CSI driver provisioned it, the member's binder bound it), it records that PV on the
// hub, labelled Upsync for the target, named after the hub claim, with its claimRef pointing
// at the hub claim and the member's name for it in an annotation (see the volume protocol in
// api/workload/v1alpha1). Before it makes the hub PV, it marks the member's PV with the
// target, the hub PV and the hub claim (transform.OriginAnnotation), so that the syncer knows
// the PV for its own whatever becomes of them: the downsync removes it, Retain, once the hub
// gives the target neither, as on a Fence, and the heartbeat counts it until then. The same
// write makes a PV provisioned for the syncer's copy Retain, keeping the policy it came with
// for the hub PV: a volume the hub recorded is released only through the syncer, not when
// the copy goes some other way, as with its namespace deleted in the member. While the
// label says Upsync it keeps the hub PV in line with the member's, except its binding and
// reclaim policy, which are the hub's, and removes it if the member's PV goes. A claim being
// deleted in the member is not upsynced. Once coordination switches the label to Sync it
// leaves the hub PV to the downsync controller, which then takes the member's PV over in
// place.
//
// It also adopts the claims a member made itself in the syncer's namespaces (a member's
// StatefulSet controller that made a pod's claim before the hub's arrived, or an operator in
// the member), found once bound, through the claims and the member PVs bound to them.
// Without a hub claim of that name it upsyncs one, labelled Upsync for the target, and
// records the member's PV for it as for a provisioned one; coordination binds the two and
// turns the claim to Sync. Once the hub claim is Sync for the target, it marks the member's
// claim as its own copy, so that the downsync keeps it, unless the hub claim's volume is
// another one: then the member's claim and its volume stay as they are, and a
// ClaimNotAdopted event on the hub claim says why.
package upsync
