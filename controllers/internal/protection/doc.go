// Package protection lets go of the finalizers a hub API server's StorageObjectInUseProtection
// admission puts on every claim and PV. The hub runs no pods and no protection controllers,
// so nothing else would ever remove them: the component that deletes a hub claim or PV, or
// that is done with one being deleted, drops them itself.
package protection
