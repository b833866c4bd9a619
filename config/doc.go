// Package config holds Custody's deployment manifests, the kustomizations of this folder
// (see README.md), for the programs that deploy them as well as for kustomize. RenderMember
// renders config/member, the overlay that every member cluster is given, for one member: it is
// what `kubectl custody join` writes, so that a joined member runs exactly what
// `kubectl apply -k config/member` would run.
package config
