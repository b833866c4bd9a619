package simstorage

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
)

// The storage's view of its clients, as csi-addons shows it: the csi-addons sidecar of the
// driver's controller registers a CSIAddonsNode in the driver's namespace; csi-addons'
// NetworkFenceClass controller names each class of the driver in the node's annotation
// csiaddons.openshift.io/networkfenceclass-names (a JSON list); and the CSIAddonsNode
// controller calls the driver's GetFenceClients for each class named there and writes the
// answers into status.networkFenceClientStatus, one entry per class with the clients (id and
// CIDRs) the storage knows of the cluster.
const (
	// csiAddonsNodeNamespace is where the simulated sidecar registers: a namespace every
	// cluster has.
	csiAddonsNodeNamespace = "kube-system"
	// networkFenceClassesAnnotation is the annotation in which csi-addons lists the
	// NetworkFenceClasses of a CSIAddonsNode's driver.
	networkFenceClassesAnnotation = "csiaddons.openshift.io/networkfenceclass-names"
)

// sidecarCapabilities are the capabilities the simulated sidecar advertises, as csi-addons
// writes them.
var sidecarCapabilities = []string{"service.CONTROLLER_SERVICE", "network_fence.NETWORK_FENCE", "network_fence.GET_CLIENTS_TO_FENCE"}

// csiAddonsNodeName names the domain's CSIAddonsNode in every member.
func (s *Storage) csiAddonsNodeName() string { return s.name + "-csi-addons-controller" }

// ReportFenceClients sets the addresses the storage reports, through GetFenceClients, as
// the clients of member, and writes them into the member's CSIAddonsNode, as a storage whose
// view differs from the member's SyncTarget (a node added, a CIDR mistyped) does; nil
// reports the member's node CIDRs again, the default.
func (s *Storage) ReportFenceClients(ctx context.Context, member string, cidrs []string) error {
	s.mu.Lock()
	if cidrs == nil {
		delete(s.clients, member)
	} else {
		s.clients[member] = slices.Clone(cidrs)
	}
	s.mu.Unlock()
	return s.reportFenceClients(ctx, member)
}

// fenceClients is what GetFenceClients answers for member: one client, named after it, with
// the addresses the storage knows.
func (s *Storage) fenceClients(member string) []csiaddonsv1alpha1.ClientDetail {
	s.mu.Lock()
	cidrs, set := s.clients[member]
	s.mu.Unlock()
	if !set {
		cidrs = s.ledger.nodeCIDRs(member)
	}
	return []csiaddonsv1alpha1.ClientDetail{{Id: member, Cidrs: slices.Clone(cidrs)}}
}

// reportFenceClients registers the domain's CSIAddonsNode in member, names the domain's
// NetworkFenceClass in it, and writes the clients GetFenceClients answers into its status.
// A member that serves no CSIAddonsNodes gets none.
func (s *Storage) reportFenceClients(ctx context.Context, member string) error {
	s.mu.Lock()
	r, w := s.readers[member], s.writers[member]
	s.mu.Unlock()
	if r == nil || w == nil {
		return fmt.Errorf("simulated storage %s is not attached to %s", s.name, member)
	}
	classes, err := json.Marshal([]string{s.name})
	if err != nil {
		return err
	}
	node := &csiaddonsv1alpha1.CSIAddonsNode{
		ObjectMeta: metav1.ObjectMeta{Name: s.csiAddonsNodeName(), Namespace: csiAddonsNodeNamespace,
			Annotations: map[string]string{networkFenceClassesAnnotation: string(classes)}},
		Spec: csiaddonsv1alpha1.CSIAddonsNodeSpec{Driver: csiaddonsv1alpha1.CSIAddonsNodeDriver{
			Name: s.Provisioner(), EndPoint: "pod://" + s.csiAddonsNodeName() + "." + csiAddonsNodeNamespace + ":9070", NodeID: "controller"}},
	}
	if err := ensure(ctx, r, w, node); meta.IsNoMatchError(err) {
		return nil
	} else if err != nil {
		return err
	}
	if err := r.Get(ctx, client.ObjectKeyFromObject(node), node); err != nil {
		return err
	}
	patch := client.MergeFrom(node.DeepCopy())
	node.Status = csiaddonsv1alpha1.CSIAddonsNodeStatus{
		State: csiaddonsv1alpha1.CSIAddonsNodeStateConnected, Message: "Successfully established connection with sidecar",
		Capabilities:             sidecarCapabilities,
		NetworkFenceClientStatus: []csiaddonsv1alpha1.NetworkFenceClientStatus{{NetworkFenceClassName: s.name, ClientDetails: s.fenceClients(member)}},
	}
	return client.IgnoreNotFound(w.Status().Patch(ctx, node, patch))
}
