package v1alpha1

// HeartbeatNamespace is the hub namespace of the heartbeat Leases. Each syncer renews the
// coordination.k8s.io Lease named after its SyncTarget there; its leaseDurationSeconds is
// the syncer's renewal period, rounded up to a second. The health controller turns the Lease
// into the SyncTarget's Ready condition.
//
// It is a namespace of its own, as Kubernetes keeps node Leases in kube-node-lease: in
// custody-system, where the controller's leader-election Lease lives, a SyncTarget named
// like that Lease would have its syncer renew the controller's lease. No Placement ever
// selects it.
const HeartbeatNamespace = "custody-heartbeats"
