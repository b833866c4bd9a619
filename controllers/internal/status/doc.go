// Package status is the one way Custody's controllers and syncers write the status of an
// object: server-side apply of the status subresource, with a field manager per writer.
//
// A writer applies a fresh object that holds only the status fields it owns. The API server
// merges each writer's fields (conditions by type, as their schema lists them by type), so
// two writers of one object, such as the location and storageclass controllers on a
// Location, or the health controller and a syncer on a SyncTarget, cannot undo each other's
// fields, whatever order their writes land in.
package status
