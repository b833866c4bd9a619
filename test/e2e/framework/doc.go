// Package framework holds the steps the end-to-end suites under test/e2e share: starting a
// bed or an environment for the suite and stopping it after, making the hub objects a spec
// starts from (a placed namespace, Locations, SyncTargets), changing them as a user or a
// controller would, and waiting until they are gone.
//
// Each step takes what it acts on (a context, a client, a bed) rather than reading a suite's
// variables, so that every suite calls it on its own hub and members. A step fails the spec
// through Gomega's global Expect and marks itself a helper, so that a failure points at the
// spec's line; what a suite alone needs stays in that suite's helpers_test.go.
package framework
