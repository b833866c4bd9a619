// Package location holds the location controller: it counts each Location's SyncTargets
// (instances, and the available ones: Ready and not cordoned or evicting) and reports with
// the SelectorValid condition whether the instance selector parses.
//
// It shares the Location's status with the storageclass controller, which keeps the
// StorageClassesCompatible condition. Each applies only the fields it owns, under a field
// manager of its own (package controllers/internal/status), so neither can drop or
// overwrite what the other wrote.
package location
