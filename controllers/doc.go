// Package controllers wires the hub controllers into one manager: placement, location,
// scheduler, workload, health, storageclass and coordination, each in a package of its own. The controller binary
// (cmd/controller), the test suites and the local environment all start them through Setup.
package controllers
