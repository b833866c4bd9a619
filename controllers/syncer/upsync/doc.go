// Package upsync is the syncer's controller for the PVs a member provisions. When the
// downstream copy of a hub claim that the syncer created is Bound to a PV the member made
// (its CSI driver provisioned it, the member's binder bound it), it records that PV on the
// hub, labelled Upsync for the target, named after the hub claim, with its claimRef pointing
// at the hub claim and the member's name for it in an annotation (see the volume protocol in
// api/workload/v1alpha1). While the label says Upsync it keeps the hub PV in line with the
// member's, and removes it if the member's PV goes. Once coordination switches the label to
// Sync it leaves the hub PV to the downsync controller, which then takes the member's PV
// over in place.
package upsync
