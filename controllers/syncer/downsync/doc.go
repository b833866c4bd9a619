// Package downsync is the syncer's controller for hub objects a target syncs: one Reconciler
// per resource type. It keeps each hub object labelled Sync for the target equal to its
// copy in the member, creating the translated namespace first; puts the syncer finalizer on
// the hub object once the copy exists, which coordination reads as the copy's existence;
// syncs status up, but for a Bound claim's copy that its member is still binding, moved or
// restored from a replica (the hub claim stays Bound); runs the deletion flow (removal
// requested by annotation or by deletion, held by coordination finalizers, then the
// downstream copy deleted and awaited, then the finalizer and state label removed); and
// removes downstream copies whose hub object is no
// longer synced to the target, once the hub's API server, read past the cache, confirms it
// (a cache may lag behind an object just made, or restored by an import). A claim restored
// from a replica of another namespace gets the replica imported into its namespace until
// its copy is bound (downsync_import.go).
//
// It writes downstream with server-side apply under one field manager, so that fields the
// member itself sets (a PV binding, an allocated address, a controller's annotations) stay
// untouched, and fields removed upstream go downstream too. Everything it decides from is
// in the API (the state label, the syncer's markers on downstream objects), so a restart
// resumes where it stopped.
package downsync
