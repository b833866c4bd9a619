// Package faults runs randomized fault schedules against the real test bed and checks
// Custody's invariants with the simulated storage as the oracle.
//
// A schedule is a seed. Draw turns it into a workload (claims, a StatefulSet, writes through
// the storage's write path, moves by cordon and uncordon, a hub PV kept with Retain, claims
// deleted) interleaved with faults that each heal after a drawn time: the controller killed,
// a syncer killed, a member's API server stopped, a member partitioned (its syncer stopped
// while it runs on), the hub's API server restarted, and slow or failing storage answers to
// volume and fencing operations. One schedule in twenty is a pair schedule: it runs in the
// primary of two Locations (each over a storage domain of its own, with VolSync played in
// their members), protects its claims with a LocationPair, and loses every member of the
// primary until the pair has failed over (pair.go says what it checks besides). Run plays a
// schedule on one long-lived bed, in a namespace of its own, waits until the system settles,
// deletes what the schedule made and checks:
//
//   - the storage's ledger recorded no violation (a second unfenced holder of an owned
//     volume, a release of a volume in use or still referenced, a double release, a member
//     unfenced beside another holder) and every acknowledged write is in its volume;
//   - every version of a hub claim or PV the observer saw had at most one target in Sync or
//     Upsync for an owned volume, and no other target beside one in Upsync;
//   - no member PV was Delete before its claim's deletion was asked for, once it had been
//     Retain or when it was a copy (not the PV the storage provisioned there);
//   - a hub PV kept with Retain was never released, and every other deleted claim's volume
//     was released exactly once;
//   - every claim converged to one owner where its namespace runs, and the system settled
//     (every target Ready, every fence lifted) within the liveness bound;
//   - after the batch, every target let go of every schedule's namespace.
//
// Schedules run a few at once (-at-once, 8 by default; one pair schedule at a time, since a
// pair protects every namespace of its primary, the pair schedules first, as each takes
// minutes), each in its own namespace. A fault on
// a shared part of the bed (the controller, the hub, the storage, a target's cordon) starts
// with the first schedule that draws it and heals with the last; a member under one
// schedule's fault is skipped by the others. A schedule's time to settle, and its liveness
// bound, count from its own last heal or the bed's, whichever came later (the bound at most
// four times its length after its own). A replay (N=1) runs the schedule alone, so it
// repeats its steps but not the faults of the schedules that ran beside it.
//
// With -hub-sites 3 (make faults HUB_SITES=3) the bed's hub spans three sites (two main
// sites, each with an API server and a controller replica, and a witness; the members run in
// none), and a schedule loses one of the sites, etcd member, API server and controller
// replica together, where a hub of one site would restart its API server.
//
// TestFaults (build tag faults; make faults, and make test with a batch of 100, then as many
// as four minutes allow on a hub across three sites) runs the regression schedules, kept as
// steps (on a hub of one site, where they were drawn), then a batch drawn from a seed that
// changes with each run unless -seed fixes it; a failing schedule prints its seed, its steps
// as drawn and as run, and the make command that replays it, and the batch's last lines
// repeat each failed schedule's first violation.
package faults
