// Package placedcache is the syncer's cache of the hub when its hub identity may read
// namespaced objects only in the namespaces placed on its target: one informer per resource
// type and placed namespace, started when a namespace is placed and stopped when it leaves.
//
// controller-runtime's caches fix their namespaces when they start; this one follows a set
// that changes. It holds an all-namespaces cache for cluster-scoped types and for the
// namespaced types named Everywhere (read in every namespace), whose Namespace informer (label
// selected for the target) tells which namespaces are placed. Every other namespaced type is
// read from a cache of its own per placed namespace. An informer handed out for such a type
// stands for all of them: a handler added to it is added to every namespace's informer, now
// and as namespaces are placed, and field indexes too.
//
// A namespace's cache starts once the hub grants the identity its reads there (the hub's
// controller binds them after the namespace is placed), however long that takes: until then,
// and until it has synced, reads in that namespace wait (up to a timeout, then fail), so that
// an empty cache is never taken for an empty namespace. Reads in a namespace that is not
// placed find nothing. The cache counts as synced once its all-namespaces part has: a
// namespace whose grant is late must not hold back the syncer's other work.
package placedcache
