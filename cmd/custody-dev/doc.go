// Command custody-dev runs Custody locally: a hub and member clusters on real control planes
// with simulated storage and VolSync, the SyncTargets and Locations that describe them, the
// hub controllers and one syncer per member. It writes a kubeconfig per cluster to its state
// directory and runs until interrupted. `make run` builds and starts it.
//
// While it runs, it serves a control API on a unix socket in its state directory, which its
// subcommands call from another terminal: `custody-dev stop MEMBER` loses a member (its
// syncer and API server stop; with --partition only its syncer), `custody-dev start MEMBER`
// brings it back, and `custody-dev status` lists what of each member runs. With
// --hub-sites 3 the hub spans three sites, and `custody-dev stop-site SITE` loses a whole site
// (its members, its etcd member, API server and controller replica) until `start-site SITE`.
package main
