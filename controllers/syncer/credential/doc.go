// Package credential keeps a syncer's hub credential alive: a bound, expiring token of the
// syncer's own ServiceAccount on the hub, which `kubectl custody join` requests and puts in the
// member's manifest.
//
// A Renewer holds the current token and gives the syncer a rest.Config whose every request
// carries it, so that the clients and caches made from that config follow each renewal
// without being rebuilt. Before less than half of the token's lifetime is left, the Renewer
// requests a new token of the same lifetime with the TokenRequest API, on its own
// ServiceAccount, the only one the hub lets it request tokens of (the Role join makes, bound
// by resourceNames), and keeps the kubeconfig with the new token in a Store: the member's
// Secret that the syncer's Deployment mounts, so that a syncer that restarts starts from the
// newest token rather than from the one join gave it.
//
// The token's claims are read without checking its signature: the syncer only needs to know
// whose token it holds and when it expires; the hub checks the rest.
package credential
