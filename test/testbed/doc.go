// Package testbed starts a Custody hub and member clusters in one process, on real control
// planes: etcd and kube-apiserver through controller-runtime's envtest, and a real
// kube-controller-manager beside each API server.
//
// The hub's controller manager runs only the namespace, garbage-collector and service account
// token controllers, so hub objects are records and nothing on the hub binds a volume or runs
// a pod; the token controller fills in the tokens of the syncers' hub identities. Each
// cluster signs its service account tokens with a key kept in its state directory, so that a
// token stays valid when the bed starts again on the same state. Each member's
// controller manager runs the PV binder, PV and PVC protection, the garbage collector and the
// workload controllers, so binding and protection on a member are Kubernetes' own. Members are
// attached to simulated storage domains (package simstorage), which provision their volumes.
// Each member has node CIDRs of its own (Cluster.NodeCIDRs), stable for a bed, which its
// storage domains know, so that a NetworkFence can name them to fence it. A cluster's API
// server can be stopped and started again on the same state (an outage), and the hub's state
// can be lost (Cluster.Wipe: etcd emptied, the API server back on the same address with the
// same certificates and CRDs), as a hub whose etcd was lost and is about to be restored.
//
// Each member also has a few nodes (Options.Nodes, DefaultNodes unless set), the way
// Kubernetes' own scale tests give a real control plane nodes: kwok (sigs.k8s.io/kwok) plays
// them and their kubelets, with the stages kwokctl gives it by default, and a kube-scheduler
// binds pods to them. So a pod in a member is scheduled, runs and becomes Ready, a Deployment
// or StatefulSet reports its ready replicas, a pod holds its claims through the member's PVC
// protection until it is gone, and a claim whose class waits for its first consumer is
// provisioned once a pod of it is scheduled. The nodes register with an address in the
// member's node CIDRs and no taint, so that any pod fits; the member's controller manager adds
// the node lifecycle controller, which takes off the not-ready taint a new node gets. A test
// that must do without them sets Options.NoNodes: the member's pods then stay Pending.
//
// The hub can span sites (Options.HubSites, three or another odd number): an etcd member in
// each site, and a kube-apiserver and a kube-controller-manager that elects a leader in each
// site but the last, the witness. The API servers share one serving certificate, client CA,
// token signing key and issuer, so that every client and token of the bed is good at each; the
// hub's Config reaches whichever answers (reconnect.Servers), as a syncer does. A member runs
// in a site (MemberOptions.Site), and Cluster.StopSite loses a whole site of the hub at once.
//
// The binaries come from bin/, built by hack/tools.sh from the versions pinned in
// hack/tools/go.mod (kwok's in hack/tools/kwok/go.mod); the bed builds them when they are
// missing. A reaper process kills every
// process of a bed and removes its directory if the test process dies without stopping it.
//
// The bed is used by the multi-cluster test suites and by the local environment (`make run`).
package testbed
