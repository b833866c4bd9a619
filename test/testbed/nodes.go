package testbed

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// DefaultNodes is how many nodes a member has unless Options say otherwise: enough for a
// workload's replicas to spread, few enough that they cost nothing to keep alive.
const DefaultNodes = 2

// Node labels and annotations, as kubelet and kwok set them.
const (
	// KwokNodeAnnotation marks a node that kwok plays, as kwok's documentation has it; kwok
	// manages every node of a member whatever its annotations.
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	// NodeTypeLabel is kwok's label of the nodes it plays, type=kwok.
	NodeTypeLabel = "type"
)

// nodeControllers are the controllers a member with nodes runs besides controllers[RoleMember].
// The API server taints every new node not-ready (its TaintNodesByCondition admission), and the
// node lifecycle controller takes the taint off once the node reports Ready, and puts it back
// while its kubelet stops renewing its Lease. Pods are not evicted from a node that goes
// NotReady: that is the taint eviction controller's, which the bed does not run.
var nodeControllers = []string{"node-lifecycle-controller"}

// Node capacity: that of a modest production node, so that any test workload fits.
var nodeCapacity = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("32"),
	corev1.ResourceMemory: resource.MustParse("256Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// podCIDR is the range kwok gives the pods of a member their IPs from; members are apart, so
// they may share it.
const podCIDR = "10.244.0.1/16"

// nodeLeaseSeconds is the duration of the nodes' Leases, which kwok renews as a kubelet does;
// kubelet's default.
const nodeLeaseSeconds = "40"

// nodes are what plays a member's nodes: kube-scheduler, which binds pods to nodes, and kwok,
// which plays the kubelet of every node (it reports the nodes Ready, renews their Leases, runs
// a bound pod to Ready, and lets a deleted one go). Like the controller manager, they keep
// running while the API server is stopped; they start afresh when it comes back (restart).
type nodes struct {
	count           int
	scheduler, kwok *daemon
}

// start starts kube-scheduler and kwok beside the cluster's API server.
func (n *nodes) start(c *Cluster) error {
	schedConfig, err := c.schedulerConfig()
	if err != nil {
		return err
	}
	if n.scheduler, err = startDaemon(c.log, filepath.Join(c.binDir, "kube-scheduler"),
		"--config="+schedConfig, "--secure-port=0"); err != nil {
		return fmt.Errorf("starting kube-scheduler: %w", err)
	}
	kwokConfig, err := c.kwokConfig()
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(c.dir, "kwok.kubeconfig")
	if _, err := c.writeKubeconfig("system:kwok", kubeconfig); err != nil {
		return err
	}
	if n.kwok, err = startDaemon(c.log, filepath.Join(c.binDir, "kwok"),
		"--kubeconfig="+kubeconfig, "--config="+kwokConfig,
		"--manage-all-nodes=true", "--cidr="+podCIDR,
		"--node-lease-duration-seconds="+nodeLeaseSeconds); err != nil {
		return fmt.Errorf("starting kwok: %w", err)
	}
	return nil
}

// restart starts kube-scheduler and kwok afresh after the API server came back. Running on,
// they would catch up only when client-go's backoff lets their watches reconnect, a backoff
// that grows with each outage: kwok ran a pod 50 s after an outage of 5 s, once 90 s were not
// enough, and meanwhile it renewed the nodes' Leases from a stale cache and was refused. The
// nodes' Leases go first: a kwok started afresh is another holder, which would take them
// over only once the old holder's expired (nodeLeaseSeconds), playing no node until then,
// and the pods it listed on a node it took over while its Lease cache still named the old
// holder were dropped for good (they neither ran nor went until its pod watch was made anew,
// nine minutes later). Started without them, it makes them again at once; resync covers the
// pods it may still drop while it starts. A nil nodes has nothing to restart.
func (n *nodes) restart(ctx context.Context, c *Cluster) error {
	if n == nil {
		return nil
	}
	n.stop()
	if err := c.Client.DeleteAllOf(ctx, &coordinationv1.Lease{}, client.InNamespace(corev1.NamespaceNodeLease)); err != nil {
		return fmt.Errorf("deleting the nodes' Leases: %w", err)
	}
	if err := n.start(c); err != nil {
		return err
	}
	return n.resync(ctx, c)
}

// resyncAnnotation is what resync touches a pod with.
const resyncAnnotation = "testbed.custody.dev/resync"

// resync waits until kwok holds every node's Lease again, then touches each pod it still has
// to act on (bound to a node and Pending, or being deleted), so that kwok hears of it as a
// node's holder: a kwok that has just started drops the pods it hears of before it holds
// their node's Lease in its own cache (seen once in 56 restarts), and hears of them again
// only when they change.
func (n *nodes) resync(ctx context.Context, c *Cluster) error {
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, clusterStartTimeout, true, func(ctx context.Context) (bool, error) {
		leases := &coordinationv1.LeaseList{}
		err := c.Client.List(ctx, leases, client.InNamespace(corev1.NamespaceNodeLease))
		return err == nil && len(leases.Items) >= n.count, nil
	}); err != nil {
		return fmt.Errorf("waiting for kwok to hold the nodes' Leases: %w", err)
	}
	pods := &corev1.PodList{}
	if err := c.Client.List(ctx, pods); err != nil {
		return err
	}
	touch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, resyncAnnotation, time.Now().Format(time.RFC3339Nano))
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.Spec.NodeName == "" || (pod.Status.Phase != corev1.PodPending && pod.DeletionTimestamp == nil) {
			continue
		}
		if err := c.Client.Patch(ctx, pod, client.RawPatch(types.MergePatchType, touch)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("touching pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
	}
	return nil
}

// stop stops kwok and kube-scheduler. A nil nodes has nothing to stop.
func (n *nodes) stop() {
	if n == nil {
		return
	}
	n.kwok.stop()
	n.scheduler.stop()
}

// schedulerConfig writes the configuration of the cluster's kube-scheduler and returns its
// path: the default profile, no leader election (it is the member's only scheduler), and no
// client rate limit, as the controller manager's.
func (c *Cluster) schedulerConfig() (string, error) {
	kubeconfig := filepath.Join(c.dir, "kube-scheduler.kubeconfig")
	if _, err := c.writeKubeconfig("system:kube-scheduler", kubeconfig); err != nil {
		return "", err
	}
	config := map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{
			"kubeconfig": kubeconfig, "qps": 500, "burst": 1000,
		},
		"leaderElection": map[string]any{"leaderElect": false},
	}
	return writeYAML(filepath.Join(c.dir, "kube-scheduler.yaml"), config)
}

// kwokConfig writes kwok's configuration, the stages of its pinned version that kwokctl
// gives it by default (kustomize/stage/fast: a node is Ready at once and keeps a Lease; a
// bound pod runs and is Ready at once, a finished one completes, a deleted one goes), and
// returns its path.
func (c *Cluster) kwokConfig() (string, error) {
	stages, err := Render(filepath.Join(c.binDir, "kwok-stages", "fast"))
	if err != nil {
		return "", fmt.Errorf("kwok's stages (built by hack/tools.sh): %w", err)
	}
	var out bytes.Buffer
	for _, s := range stages {
		data, err := yaml.Marshal(s.Object)
		if err != nil {
			return "", err
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	path := filepath.Join(c.dir, "kwok.yaml")
	return path, os.WriteFile(path, out.Bytes(), 0o644)
}

func writeYAML(path string, v any) (string, error) {
	data, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o644)
}

// createNodes registers the member's nodes, unless they exist, as their kubelets would: with
// their capacity and an address in the member's node CIDR. kwok then reports them Ready.
func (c *Cluster) createNodes(ctx context.Context) error {
	if c.nodes == nil {
		return nil
	}
	addr := netip.Addr{}
	if len(c.NodeCIDRs) > 0 {
		prefix, err := netip.ParsePrefix(c.NodeCIDRs[0])
		if err != nil {
			return err
		}
		addr = prefix.Masked().Addr()
	}
	for i := range c.nodes.count {
		name := NodeName(c.Name, i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					corev1.LabelHostname: name, corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
					NodeTypeLabel: "kwok",
				},
				Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			},
			Status: corev1.NodeStatus{Capacity: nodeCapacity, Allocatable: nodeCapacity},
		}
		if addr.IsValid() {
			addr = addr.Next()
			node.Status.Addresses = []corev1.NodeAddress{
				{Type: corev1.NodeInternalIP, Address: addr.String()},
				{Type: corev1.NodeHostName, Address: name},
			}
		}
		if err := c.createIfMissing(ctx, node); err != nil {
			return fmt.Errorf("registering node %s: %w", name, err)
		}
	}
	return nil
}

// NodeName is the name of the member's node i, from 0.
func NodeName(member string, i int) string { return fmt.Sprintf("%s-node-%d", member, i+1) }

// Nodes is how many nodes the cluster has: zero for the hub, and for a member started with
// Options.NoNodes.
func (c *Cluster) Nodes() int {
	if c.nodes == nil {
		return 0
	}
	return c.nodes.count
}

// NodeReady tells whether the node reports the condition Ready.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
