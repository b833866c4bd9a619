// Package leases reads the heartbeat Leases that the syncers renew in the hub, for the
// controllers that judge a target by its Lease: health (is it Ready), the scheduler and
// coordination (when is it lost, see fencing.Delay), fencing and DR (has it reported its
// storage domains clean). When a target is lost is pure and lives in the fencing package;
// this package holds only the reads and the event filters.
package leases
