// Package simstorage simulates a storage system for the test bed and the local environment:
// one Storage per storage domain stands in for a CSI driver plus the array behind it, shared
// by every member attached to the domain.
//
// In each attached member it provisions a PV for every PVC whose StorageClass names the
// domain's provisioner, and deletes the backing volume when a PV with reclaimPolicy Delete is
// released. It keeps a ledger of which members hold each volume (a member holds a volume
// while a PV with its handle is Bound there) and records every breach of the invariants it
// can see, so that tests use it as the oracle.
//
// It is a test and development part: no production code imports it.
package simstorage
