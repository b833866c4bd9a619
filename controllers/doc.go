// Package controllers wires the hub controllers into one manager: placement, location,
// scheduler, workload, health, fencing, storageclass, coordination, statefulset and dr, each
// in a package of its own that imports no other controller's. The controller binary (cmd/controller), the test suites
// and the local environment all start them through Setup. What several controllers share
// lives under internal/: one way to write status (status), event mappers (enqueue), and the
// hub's claim and PV protection (protection).
package controllers
