package v1alpha1

// HeartbeatNamespace is the hub namespace of the heartbeat Leases. Each syncer renews the
// coordination.k8s.io Lease named after its SyncTarget there; its leaseDurationSeconds is
// the syncer's renewal period, rounded up to a second. The health controller turns the Lease
// into the SyncTarget's Ready condition.
const HeartbeatNamespace = "custody-system"
