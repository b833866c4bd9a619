// Package environment runs Custody end to end in one process: a test bed (a hub and member
// clusters on real control planes, with simulated storage, and nodes in each member on which
// what Custody places there runs; see package testbed), the SyncTargets and Locations
// that describe it, the hub controllers and one syncer per member. The end-to-end suites and
// the local environment (cmd/custody-dev, `make run`) start it the same way.
//
// Each syncer and the controller run as goroutines that can be stopped and started again,
// as the fault tests need. StopMember loses a member (its syncer and API server stop) or
// partitions it (its syncer stops), and StartMember brings it back: custody-dev's stop and
// start commands call them. WipeHub loses the hub's state and installs Custody on it again,
// and UseMemberManifest restarts a syncer with the hub credential of a member manifest, as an
// admin restores a hub (kubectl custody hub import) and applies the manifests it wrote.
//
// On a hub across sites (Options.HubSites) a replica of the controller runs beside each main
// site's API server, electing a leader (the first site's leads from the start), the syncers
// are given every API server, and StopSite loses a site with its members and replica.
package environment
