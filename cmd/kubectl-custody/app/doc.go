// Package app is `kubectl custody`, the kubectl plugin of Custody: the command tree, its hub
// client and the tables it prints. Run is the entry point of cmd/kubectl-custody and of the
// tests, which run the plugin in-process with buffers for its streams.
//
// It follows kubectl's conventions through cli-runtime: the kubeconfig flags and namespace
// defaulting of genericclioptions.ConfigFlags, kubectl's table printer for the listings
// (wide columns are priority 1), cli-runtime's printers for -o json, yaml, name and the
// templates, and errors as a single "error: ..." line with exit code 1.
//
// The subcommands:
//   - volumes: one row per VolumeOwnership, that is per hub PersistentVolumeClaim;
//   - targets: one row per SyncTarget, with the Locations that select it;
//   - describe volume: a VolumeOwnership and its transitions;
//   - cordon and uncordon: set or clear a SyncTarget's spec.unschedulable.
package app
