// Package versions keeps a controller from deciding twice from one state: it remembers the
// resourceVersion of each object the controller last wrote and decides from (a volume's
// record, a pair's status), and reads one whose cached version is another past the cache.
//
// A controller's caches are fed by one watch per kind, with no order between them: the cache
// of another kind may already show what the controller did after its last write (a target
// removed on the strength of a Fence, a claim asked to restore) while the object it wrote
// still shows the state before. A decision taken from the two would undo the write.
package versions
