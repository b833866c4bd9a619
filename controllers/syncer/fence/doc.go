// Package fence executes, in the syncer's member, the Fences the hub gives its target: for
// each it keeps a csi-addons NetworkFence of the fenced target's node CIDRs in the state the
// Fence asks for, reports the NetworkFence's answer to the Fence's status, and deletes the
// NetworkFence once it reported the unfence (deleting one does not unfence) or the Fence is
// no longer its to execute.
package fence
