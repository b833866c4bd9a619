// Package api gathers Custody's API groups: workload.custody.dev (SyncTargets and the
// protocol on hub objects), scheduling.custody.dev (Locations and Placements) and
// storage.custody.dev (VolumeOwnership and Fence). Each group and version lives in a folder
// of its own; AddToScheme registers them all.
package api
