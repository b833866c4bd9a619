package v1alpha1

// SyncerIdentityNamespace is the hub namespace of the syncers' ServiceAccounts, which
// `kubectl custody join` makes, one per SyncTarget.
const SyncerIdentityNamespace = "custody-system"

// SyncerIdentity names the hub ServiceAccount of the syncer of the SyncTarget whose key is
// key, in SyncerIdentityNamespace. The admission policy custody-syncer-target reads the
// target's key back from it, which is why a joined target's name is its key. The prefix
// keeps it apart from the identities config/ ships, whatever the target's name.
func SyncerIdentity(key string) string { return "custody-syncer-target-" + key }
