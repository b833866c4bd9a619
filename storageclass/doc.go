// Package storageclass compares the StorageClasses that SyncTargets report, so that a volume
// moves only between targets where its class means the same storage.
//
// Compare takes the targets of one Location and lists, sorted and deterministic, the classes
// that some targets lack and the fields in which the targets that have a class disagree.
// Compatible answers for one volume and one move: may a volume of this class, as it is on the
// target it leaves, come to the target it goes to?
//
// Not every difference matters to a move. Provisioner, parameters and storage domain say
// which storage system holds a volume and how it was made: the same class name with another
// value names other storage, where a moved volume would not be found or would not be what the
// claim asked for, so these refuse moves. Reclaim policy, binding mode, expansion and the
// default flag only govern new claims and later operations: coordination sets Retain on
// every downstream copy and records the policy the volume was provisioned with, moved volumes
// arrive pre-bound, and a refused expansion fails without harm; these are reported so that an
// operator can align them, and never refuse a move. Which class each target marks default is
// compared apart: a claim that names no class gets its target's default, so targets whose
// defaults differ cannot pass such a claim's volume between them: Compatible, given the
// claim's class on each side, refuses the move, as each class is missing on the other side.
//
// The package imports no API client. The storageclass controller turns Compare's report into
// the Location's StorageClassesCompatible condition and events; the coordination controller
// calls Compatible before it gives an owned volume to a new target.
package storageclass
