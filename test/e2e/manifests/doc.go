// Package manifests proves that config/ deploys Custody. It renders the hub's overlay
// (config/default) and a member's (config/member) with kustomize, as `kubectl apply -k` does,
// and checks the objects they hold: the controller and syncer Deployments, their flags,
// probes, mounts and security settings, and the RBAC that binds each role to its identity.
// It applies the hub's objects to a hub API server of the test bed, CRDs first, and the
// member's to a member, and checks, impersonating each ServiceAccount, that the controller
// and the syncer may do their work and not more. Then it runs the controller and syncer
// binaries with their Deployments' arguments, as their ServiceAccounts, until the member's
// SyncTarget is Ready and with no request forbidden. It also checks that the Dockerfiles
// build with the Go of go.mod.
package manifests
