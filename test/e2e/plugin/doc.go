// Package plugin runs every command of kubectl custody in-process against the hub API server
// of the test bed, and checks what it prints: volumes (-n, -A, the kubeconfig's namespace,
// -o wide and json), targets, fences, describe volume and fence, cordon and uncordon, fence
// --powered-off and unfence with their refusals, and the one-line errors of bad input, a
// missing kubeconfig and an unreachable hub. The objects the controllers would write are
// created by hand, their status through the status subresource; no controller runs.
package plugin
