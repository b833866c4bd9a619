// Command syncer runs the syncer of one SyncTarget, next to its member cluster: it syncs the
// hub objects labelled for the target down to the member, their status and the member's
// provisioned PVs up, and renews the target's heartbeat on the hub. It is a thin shell of
// flags around controllers/syncer.Run.
//
//	syncer --hub-kubeconfig=hub.kubeconfig --member-kubeconfig=m1.kubeconfig --sync-target-name=m1
package main
