// Package volumes tests volume coordination end to end: the controller, the syncers and the
// members' own binders and protection, with the simulated storage's ledger as the oracle.
package volumes
