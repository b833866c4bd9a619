// Package storageclass holds the storageclass controller: it compares the StorageClasses that
// the SyncTargets of each Location report (package storageclass at the top of the module does
// the comparing) and keeps the Location's StorageClassesCompatible condition.
//
// The condition is False, with reason StorageClassMismatch or StorageClassMissing and a
// message naming the classes and the targets, when a class differs in provisioner, parameters
// or storage domain, or is missing on some targets: volumes of that class cannot move between
// those targets. It is False too when the targets mark different classes default, with a
// message naming each target's default (reason DefaultStorageClassMismatch when nothing else
// is wrong): the volumes of claims that name no class cannot move between them. It is True
// otherwise, with reason StorageClassSettingsDiffer when a class differs only in settings
// that moves do not depend on. A Warning event goes with each change
// to False, or to another False message; a Normal event with the return to True. Events are
// recorded after the condition is written, so a retried write never repeats them.
//
// Targets being deleted are left out. The Location is recomputed when its spec changes, when
// anyone else changes or drops the condition, and when a SyncTarget is created or deleted or
// changes its labels or reported classes, never on heartbeats. The location controller writes
// other conditions of the same status; see its package for how the two writers coexist.
package storageclass
