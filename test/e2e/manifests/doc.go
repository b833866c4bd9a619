// Package manifests proves that config/ deploys Custody. It renders the hub's overlay
// (config/default) and a member's (config/member) with kustomize, as `kubectl apply -k` does,
// and checks the objects they hold: the controller and syncer Deployments, their flags,
// probes, mounts and security settings, and the RBAC that binds each role to its identity.
// It applies the hub's objects to a hub API server of the test bed, CRDs first, and the
// member's to a member, and checks, impersonating each ServiceAccount, that the controller
// and a syncer may do their work and not more. It runs `kubectl custody join` against the
// hub, whose kube-controller-manager fills in the token, applies the manifest join wrote to
// the member, and runs the controller and syncer binaries with their Deployments' arguments,
// the syncer with the hub kubeconfig of that manifest, the target's own identity, until its
// SyncTarget is Ready and with no request forbidden; and it checks that join creates nothing
// when the hub refuses the SyncTarget or the user may not bind the identity. With two
// targets joined, it checks each rule of config/admission's policy: one target's syncer is
// denied the other's Lease, SyncTarget, objects and PVs, with a message that names the rule,
// and allowed its own. It runs `kubectl custody unjoin`: a target that holds nothing goes
// with its identity, one that still holds a claim is refused with the claim named, and
// --force lets go of what it holds and says what the member keeps. It runs the controller
// and a syncer with their Deployments' metrics flags and scrapes them over HTTPS: no token
// gets 401, a token of an identity without custody-metrics-reader 403, and one bound to it
// the metrics, the hub answering for the controller and the member for the syncer. It also
// checks that the Dockerfiles build with the Go of go.mod.
package manifests
