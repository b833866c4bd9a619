// Command controller runs Custody's hub controllers against the hub API server: placement,
// location, scheduler, health, access, storageclass, coordination, fencing, DR, statefulset,
// and one workload controller per synced resource type other than claims, which
// coordination places. It is a thin shell of flags around controllers.Run.
//
//	controller --kubeconfig=hub.kubeconfig --leader-elect
package main
