// Package plugin runs every command of kubectl custody in-process against the hub API server
// of the test bed, and checks what it prints: volumes (-n, -A, the kubeconfig's namespace,
// -o wide and json), targets, describe volume, cordon and uncordon, and the one-line errors
// of bad input, a missing kubeconfig and an unreachable hub. The objects the controllers
// would write are created by hand, their status through the status subresource.
package plugin
