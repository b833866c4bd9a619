// Package syncio is what the syncer's controllers share of their reads and writes: the
// clients through which they reach the hub and the member; a read that falls back from the
// syncer's cache to the API server and takes a forbidden object for an absent one; the
// downstream namespace, made before anything in it; whether a relocate quiesced a hub
// namespace; the syncer's finalizer, put on a hub object and taken off it, and the objects it
// still holds, looked at once at start; the check that the hub is still the one the syncer
// started with, before anything is removed from the member; the field indexes of the
// syncer's caches; and the mappings from an event on a member object or a PV to the hub
// objects it concerns.
//
// What a copy looks like and what it is called is package transform's, which makes no API
// call; this package makes the calls around it. What only one controller reads or writes
// stays in that controller's package.
package syncio
