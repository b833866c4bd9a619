// Package location holds the location controller: it counts each Location's SyncTargets
// (instances, and the available ones: Ready and not cordoned or evicting) and reports with
// the SelectorValid condition whether the instance selector parses.
//
// It shares the Location's status with the storageclass controller, which keeps the
// StorageClassesCompatible condition. Each writer sets only its own condition on the list it
// read, and patches with that read's resourceVersion as a precondition, so that neither can
// overwrite a condition the other wrote in between.
package location
