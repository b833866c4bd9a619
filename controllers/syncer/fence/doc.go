// Package fence executes, in the syncer's member, the Fences the hub gives its target: for
// each it keeps a csi-addons NetworkFence of the fenced target's node CIDRs in the state the
// Fence asks for, reports the NetworkFence's answer to the Fence's status, and deletes the
// NetworkFence once the storage confirmed the unfence (deleting one does not unfence).
//
// The syncer's finalizer is on the Fence from before its NetworkFence exists until after it
// is gone, also when another target took over the Fence's execution. The storage fences
// CIDRs, not NetworkFences, so a NetworkFence must not outlive its Fence: unfenced late, it
// would lift a later Fence of the same target; left Fenced, its old answer would pass for a
// later Fence's. At start the syncer looks at every Fence its finalizer holds: one it held
// before it made the NetworkFence, stopped in between, is in neither of its caches once
// another target executes it.
package fence
