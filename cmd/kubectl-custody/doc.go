// Command kubectl-custody is the kubectl plugin of Custody: `kubectl custody` joins member
// clusters to the hub, shows the hub's volumes, sync targets and Fences, cordons targets and
// fences lost ones. Put it on PATH (make plugin builds it into bin/) and kubectl finds it.
package main
