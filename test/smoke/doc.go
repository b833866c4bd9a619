// Package smoke proves that the test bed is real: real API servers, a member's own PV binder
// binding what the simulated storage provisions, the storage's ledger catching a double hold,
// a release that happens exactly once, and an API server that restarts with its data.
package smoke
