// Package controllers wires the hub controllers into one manager: placement, location,
// scheduler, workload, health, access, fencing, storageclass, coordination, statefulset and
// dr, each in a package of its own that imports no other controller's (hack/check-imports.sh,
// run by make vet, keeps it so). The controller binary (cmd/controller) and the test bed start
// them through Run; Setup registers them with a manager made elsewhere. What several
// controllers share lives under internal/: one way to write status (status), event mappers
// (enqueue), the hub's claim and PV protection (protection), the heartbeat Leases (leases)
// and the versions a controller last wrote (versions); when a target is lost is the pure
// fencing package's.
//
// A controller package and the pure package of the same name (coordination, dr, fencing,
// storageclass) are told apart where both could be read: the pure package goes by its own
// name everywhere, the controller package, where it is imported, by its name and "ctrl"
// (drctrl).
package controllers
