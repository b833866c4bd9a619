// Package manifests proves that config/ deploys Custody. It renders the hub's overlay
// (config/default) and a member's (config/member) with kustomize, as `kubectl apply -k` does,
// and checks the objects they hold: the controller and syncer Deployments, their flags,
// probes, mounts and security settings, and the RBAC that binds each role to its identity.
// It applies the hub's objects to a hub API server of the test bed, CRDs first, and the
// member's to a member; then, impersonating each ServiceAccount, it checks that the
// controller and the syncer may do their work, and not more. It also runs each binary with
// its Deployment's arguments, so that a flag the binary lacks fails here and not in a
// crash-looping pod, and checks that the Dockerfiles build with the Go of go.mod.
package manifests
