// Package security tests Custody's trust boundaries end to end: each spec acts as the
// identity that would cross one (a member's syncer, with the token join made for its target;
// a namespace user, with every right in their own namespace and none beyond; a caller of the
// controller's metrics), expects the hub to refuse it or Custody to ignore it, and checks that
// the honest path still works.
//
// Here: a syncer reads only the namespaces placed on its target (reads_test.go), changes no
// spec or data the hub is the source of and creates nothing elsewhere, and upsyncs no PV that
// another target's claim would take (syncer_test.go); its credential expires, renews only
// itself and is revoked at once (credentials_test.go); a namespace user cannot place objects
// or release storage (tenant_test.go); the controller's metrics go to their reader only
// (metrics_test.go). The boundaries an admin's input crosses, not an identity's, are proven
// where that input is handled: system namespaces in test/e2e/scheduling (system_test.go),
// reserved names and the bounds of every knob in test/e2e/validation, a conservative clean
// report in test/e2e/volumes (clean_test.go), and commands that ask in
// cmd/kubectl-custody/app.
//
// BenchmarkPlace200Namespaces measures what the per-namespace reads cost.
package security
