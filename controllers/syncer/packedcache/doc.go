// Package packedcache keeps the unstructured objects of a controller-runtime cache packed:
// each one's content encoded in a single string (Object), about a tenth of what the same
// object takes decoded, whose maps cost the most. A syncer caches every claim and PV of its
// member and of the hub's that are placed on it; decoded, ten thousand claims took four
// times ten thousand objects of 4 to 5 KB, packed 0.4 to 0.6 KB (BenchmarkCachedObjects in
// package syncer). The strings that many objects hold, their fields' names above all, are
// kept once in the process, as words (words.go), and packed as their numbers.
//
// New wraps the making of a cache: its informers pack what they watch (Pack, after the
// cache's own transforms), and every reader that asks for unstructured objects gets them
// whole, decoded as they were before they were packed, with the same types and values: a
// Get or a List, an event handler and its predicates, an index function. A read decodes
// the objects it returns, into maps of their own; the strings share the packed bytes, or
// the words.
//
// A reader that goes over every object of a kind in a loop, and reads a few fields of each,
// lists an ObjectList instead: the objects as the cache holds them, read in place
// (Object.NestedString, and the labels and annotations through Object.MetadataEntry).
//
// The informer and controller-runtime's reader hold Objects as they hold Unstructured
// objects: an Object is a runtime.Unstructured, so that it is read from the informer of
// unstructured objects of its kind, and a metav1.Object whose name, namespace and resource
// version, which they read of every object, are read out of the string once.
package packedcache
