// Package app is `kubectl custody`, the kubectl plugin of Custody: the command tree, its hub
// client and the tables it prints. Run is the entry point of cmd/kubectl-custody and of the
// tests, which run the plugin in-process with buffers for its streams.
//
// It follows kubectl's conventions through cli-runtime: the kubeconfig flags and namespace
// defaulting of genericclioptions.ConfigFlags, kubectl's table printer for the listings
// (wide columns are priority 1), cli-runtime's printers for -o json, yaml, name and the
// templates, and errors as a single "error: ..." line with exit code 1.
//
// The subcommands:
//   - volumes: one row per VolumeOwnership, that is per hub PersistentVolumeClaim;
//   - targets: one row per SyncTarget, with the Locations that select it;
//   - fences: one row per Fence, sorted by target and domain;
//   - describe volume: a VolumeOwnership and its transitions;
//   - describe fence: a Fence, its NetworkFence report, step times, conditions and events;
//   - cordon and uncordon: set or clear a SyncTarget's spec.unschedulable;
//   - fence --powered-off: a Manual Fence per storage domain of a SyncTarget that is not
//     Ready, on the admin's word that its member is off;
//   - unfence: spec.state Unfenced on a SyncTarget's Fences, refused for a Fence that holds
//     while its target is not Ready and clean in the Fence's domain;
//   - join: a SyncTarget with a hub identity of its own (ServiceAccount, ClusterRoleBinding,
//     token Secret), and the member's manifest, config/member rendered for that target with
//     a hub kubeconfig that carries the token. The hub checks the SyncTarget with a dry run
//     first and it is written last; a failed run deletes what it created;
//   - unjoin: spec.evict on a SyncTarget, a wait until no hub object carries its state label,
//     then its identity deleted, the token first, and the SyncTarget last; refused past
//     --timeout, naming its claims, unless --force, which takes the target off what it still
//     holds and lists what its member keeps.
//   - hub status: the hub's etcd members from their JSON gateway (health, raft leader,
//     quorum), each API server's /readyz with the kubeconfig's credentials, and the
//     controller's leader election Lease; exit 1 when etcd has no quorum, no API server is
//     ready or no replica leads;
//   - hub export: the hub's identity and its Custody objects, with the namespaces, claims and
//     PVs they coordinate, in one file; hub import: that file into an empty hub, the identity
//     kept in custody-system/custody-hub-identity first, owners before what they own and
//     references remapped to the new uids, then a new credential per joined target, as join
//     makes it.
//
// The commands whose writes are not easily taken back (failover, relocate, fence
// --powered-off, unfence, unjoin --force) say what they are about to do and ask for
// confirmation unless --yes; fence, unfence and unjoin take --dry-run, which asks nothing and
// makes every write a server-side dry run. An unknown target is refused by name.
package app
