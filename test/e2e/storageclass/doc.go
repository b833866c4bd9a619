// Package storageclass tests the storageclass controller on a real hub API server, with the
// other hub controllers running beside it: SyncTargets report their StorageClasses in status
// as syncers do, and the suite checks each Location's StorageClassesCompatible condition and
// events for matching classes, mismatches in provisioner and parameters, a class missing on
// one target, settings that differ without refusing moves, targets joining and leaving by
// label, recovery, and the location controller's own status surviving beside it.
package storageclass
