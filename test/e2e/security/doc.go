// Package security tests Custody's trust boundaries end to end: each spec acts as the
// identity that would cross one (a member's syncer, with the token join made for its target;
// a namespace user, with every right in their own namespace and none beyond), expects the
// hub to refuse it or Custody to ignore it, and checks that the honest path still works.
package security
