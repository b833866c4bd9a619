// Package transform is the syncer's pure logic: how a hub object becomes its downstream copy
// in one member and how a member's PV becomes a hub PV. It names downstream namespaces and
// PVs, strips what must not cross (the protocol's labels and annotations, the fields a
// member's PV binder owns, addresses a cluster allocates), rewrites the mutual references of
// PVCs and PVs, merges a target's node selector and tolerations into pod templates, and
// tells whether a downstream object already matches. It makes no API call; the downsync and
// upsync controllers feed it what they read.
package transform
