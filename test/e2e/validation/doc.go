// Package validation proves the CRDs' own validation against a real hub API server with
// Custody's CRDs installed, and no controller: what the schema and its CEL rules refuse is
// refused at admission, with its message, and what they allow is made. It covers the bounds
// that keep an object from stalling Custody or colliding with its own: names that become
// target keys, label values and derived object names, reserved SyncTarget names, the
// minimums of fenceDelay and failoverThreshold, and node CIDRs.
package validation
