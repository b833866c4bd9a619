// Package dr tests disaster recovery between the two Locations of a LocationPair end to end:
// the controller, the syncers, and VolSync and the storage as the simulated storage plays
// them, with the storage's write logs as the oracle.
package dr
