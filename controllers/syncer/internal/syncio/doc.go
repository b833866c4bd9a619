// Package syncio is what the syncer's controllers share of their reads and writes: the
// clients through which they reach the hub and the member, a read that falls back from the
// syncer's cache to the API server and counts a forbidden object as absent, the downstream
// namespace made before anything in it, the syncer's finalizer put on and taken off a hub
// object (and the objects it still holds looked at once at start), the field indexes of the
// syncer's caches, and the mappings of member objects to the hub objects they stand for.
//
// What a copy looks like and what it is called is package transform's, which makes no API
// call; this package does the API calls around it. What only one controller reads or writes
// stays in that controller's package.
package syncio
