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
// server never shows a PV gone that the storage still has attached. The ledger records every
// refusal and every release that breaks an invariant, so that tests use it as the oracle.
//
// It is a test and development part: no production code imports it.
package simstorage
