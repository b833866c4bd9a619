// Package versions keeps a controller from deciding twice from one state: it remembers the
// resourceVersion of each object the controller last wrote and decides from (a volume's
// record, a pair's status), and reads one whose cached version is another past the cache.
//
// A controller's caches are fed by one watch per kind, with no order between them: the cache
// of another kind may already show what the controller did after its last write (a target
// removed on the strength of a Fence, a claim asked to restore) while the object it wrote
// still shows the state before. A decision taken from the two would undo the write.
//
// It also remembers the versions its writes replaced (Replaced): while the cache still holds
// such a version, the controller waits for the write's event instead of deciding again from
// the state before it, which would make the write again against a version that is gone, for
// the API server to refuse as a conflict.
package versions
