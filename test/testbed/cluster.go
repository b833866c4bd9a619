package testbed

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Role says what runs beside a cluster's API server.
type Role string

const (
	// RoleHub is the hub: only the namespace, garbage-collector and service account token
	// controllers.
	RoleHub Role = "hub"
	// RoleMember is a member cluster: the PV binder, protection and workload controllers too,
	// and, unless Options.NoNodes, nodes with a scheduler.
	RoleMember Role = "member"
)

// controllers lists the kube-controller-manager controllers each role runs.
var controllers = map[Role][]string{
	RoleHub: {"namespace-controller", "garbage-collector-controller", "serviceaccount-token-controller"},
	RoleMember: {
		"namespace-controller", "garbage-collector-controller",
		"persistentvolume-binder-controller", "persistentvolume-protection-controller",
		"persistentvolumeclaim-protection-controller",
		"deployment-controller", "replicaset-controller", "statefulset-controller",
	},
}

const (
	// StartTimeout bounds a bed's start on a loaded two-core machine.
	StartTimeout        = 3 * time.Minute
	clusterStartTimeout = 2 * time.Minute
	stopTimeout         = time.Minute
	// etcdStopTimeout bounds the stop of a site's etcd member (StopSite), from its start: an
	// envtest process stops within the timeout it had when it started. It hands its
	// leadership over and waits for the other sites' API servers to close their watches,
	// each for up to its request timeout, 10 s at the bed's election timeout: 11 s alone, and
	// more than a minute beside another suite on two cores.
	etcdStopTimeout = 3 * time.Minute
)

// Cluster is one control plane of the bed: etcd, kube-apiserver and kube-controller-manager,
// and, in a member with nodes, kube-scheduler and kwok.
type Cluster struct {
	// Name is the cluster's name in the bed, also the name of its kubeconfig file.
	Name string
	// Role says which controllers run beside the API server.
	Role Role
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Client is an uncached client built from Config.
	Client client.Client
	// Kubeconfig is the path of a kubeconfig file equivalent to Config.
	Kubeconfig string
	// NodeCIDRs are a member's node addresses as its storage domains see them, the CIDRs a
	// NetworkFence names to fence it; stable for a bed. Empty for the hub.
	NodeCIDRs []string
	// Site is the hub site a member runs in (MemberOptions.Site); empty for the hub.
	Site string

	dir    string
	binDir string
	// signingKey is the file of the key that signs the cluster's service account tokens.
	signingKey string
	stopped    time.Time // when StopAPIServer last ran
	down       bool      // the API server is stopped
	env        *envtest.Environment
	log        *os.File
	kcm        *daemon
	kcmFlags   []string  // beyond the bed's own
	kcmStarted time.Time // when the controller manager last started
	// nodes are a member's kube-scheduler and kwok, which plays its nodes and their kubelets;
	// nil when it has none.
	nodes *nodes
	// kcmStarting: the API server stopped while the controller manager was still starting.
	kcmStarting bool
	// sites are the sites of a hub across sites, the Witness last; nil for a cluster of one.
	sites []*hubSite
}

// startCluster starts a control plane whose state lives in dir, installs the CRDs found in
// crdDirs and writes the admin kubeconfig to kubeconfigPath. A member with nodes > 0 also
// runs kube-scheduler and kwok to play that many nodes (createNodes registers them).
// A hub across the named sites (siteNames, HubSiteNames) runs an etcd member in each and an
// API server and a controller manager in each main site.
func startCluster(name string, role Role, dir, binDir, kubeconfigPath string, crdDirs []string, scheme *runtime.Scheme, kcmFlags []string, nodeCount int, siteNames []string) (_ *Cluster, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	log, err := os.OpenFile(filepath.Join(dir, "control-plane.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Name: name, Role: role, Kubeconfig: kubeconfigPath, dir: dir, binDir: binDir, log: log, kcmFlags: kcmFlags}
	if role == RoleMember && nodeCount > 0 {
		c.nodes = &nodes{count: nodeCount}
	}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("starting %s (logs in %s): %w", name, log.Name(), err), c.stop())
		}
	}()

	// A fixed cert dir keeps the serving certificate across an API server restart; a fresh
	// one is made per start of the bed, since the client CA lives only in memory.
	pki := filepath.Join(dir, "pki")
	if err := os.RemoveAll(pki); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	if c.signingKey, err = signingKey(dir); err != nil {
		return c, err
	}
	apiServer := &envtest.APIServer{CertDir: pki, Out: log, Err: log}
	configureAPIServer(apiServer, c.signingKey)
	c.env = &envtest.Environment{
		BinaryAssetsDirectory:    binDir,
		CRDDirectoryPaths:        crdDirs,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
		ControlPlaneStartTimeout: clusterStartTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
		ControlPlane: envtest.ControlPlane{
			Etcd:      &envtest.Etcd{DataDir: filepath.Join(dir, "etcd"), Out: log, Err: log},
			APIServer: apiServer,
		},
	}
	var etcds errgroup.Group
	if len(siteNames) > 1 {
		if err := c.planSites(siteNames); err != nil {
			return c, err
		}
		c.startSiteEtcds(&etcds)
	}
	_, err = c.env.Start()
	if err := errors.Join(err, etcds.Wait()); err != nil {
		return c, err
	}
	admin, err := c.writeKubeconfig("custody-admin", kubeconfigPath)
	if err != nil {
		return c, err
	}
	// The bed's servers are local and tests hammer them: no client-side rate limit.
	admin.QPS = -1
	c.Config = admin
	if c.sites != nil {
		if err := c.startSites(context.Background()); err != nil {
			return c, err
		}
	}
	if c.Client, err = client.New(c.Config, client.Options{Scheme: scheme}); err != nil {
		return c, err
	}
	if c.sites != nil {
		return c, c.startSiteControllerManagers()
	}
	if err := c.startControllerManager(); err != nil {
		return c, err
	}
	if c.nodes != nil {
		return c, c.nodes.start(c)
	}
	return c, nil
}

// signingKey returns the file of the key that signs the service account tokens of the
// cluster whose state lives in dir, made on its first start. Unlike the certificates it is
// kept across starts, so that a token given out before, as one in a syncer's kubeconfig,
// stays valid.
func signingKey(dir string) (string, error) {
	path := filepath.Join(dir, "sa-signer.key")
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		return path, err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	data := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	// Written aside and renamed, so that a start cut short leaves no half-written key.
	if err := os.WriteFile(path+".new", data, 0o600); err != nil {
		return "", err
	}
	return path, os.Rename(path+".new", path)
}

// writeKubeconfig adds a system:masters user and writes a kubeconfig for it to path.
func (c *Cluster) writeKubeconfig(user, path string) (*rest.Config, error) {
	u, err := c.env.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	data, err := u.KubeConfig()
	if err != nil {
		return nil, err
	}
	return u.Config(), os.WriteFile(path, data, 0o600)
}

func (c *Cluster) startControllerManager() error {
	kubeconfig := filepath.Join(c.dir, "kube-controller-manager.kubeconfig")
	if _, err := c.writeKubeconfig("system:kube-controller-manager", kubeconfig); err != nil {
		return err
	}
	kcm, err := c.runControllerManager(kubeconfig, false)
	if err != nil {
		return fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	c.kcm, c.kcmStarted = kcm, time.Now()
	return nil
}

// runControllerManager runs a kube-controller-manager of the cluster's role that reaches its
// API server with kubeconfig; with leaderElect, it acts only while it holds the leader Lease.
func (c *Cluster) runControllerManager(kubeconfig string, leaderElect bool) (*daemon, error) {
	names := controllers[c.Role]
	if c.nodes != nil {
		names = append(slices.Clone(names), nodeControllers...)
	}
	return startDaemon(c.log, filepath.Join(c.binDir, "kube-controller-manager"), append([]string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(names, ","),
		"--cluster-name=" + c.Name,
		"--leader-elect=" + strconv.FormatBool(leaderElect),
		"--secure-port=0",
		"--service-account-private-key-file=" + c.signingKey,
		// Its default client rate, 20 requests per second, would pace every volume test at
		// the member's binder; large clusters raise it too.
		"--kube-api-qps=500", "--kube-api-burst=1000",
	}, c.kcmFlags...)...)
}

// StopAPIServer stops the cluster's API server and leaves etcd and the controller manager
// running, as an outage of the API server alone would.
func (c *Cluster) StopAPIServer() error {
	if c.sites != nil {
		return errAcrossSites
	}
	c.stopped, c.down = time.Now(), true
	c.kcmStarting = c.stopped.Sub(c.kcmStarted) < kcmStartup
	return c.env.ControlPlane.APIServer.Stop()
}

// APIServerRunning tells whether the cluster's API server runs: StopAPIServer stopped it
// and StartAPIServer did not start it again.
func (c *Cluster) APIServerRunning() bool { return !c.down }

// kcmRenewDeadline is how long a production kube-controller-manager keeps its leader lease
// without reaching the API server; then it exits and the kubelet starts it again.
const kcmRenewDeadline = 10 * time.Second

// kcmStartup is how long a controller manager takes to reach its API server and start its
// controllers. One whose API server went away sooner may never start them (it was seen with
// its namespace controller idle for good): its liveness probe would have it restarted.
const kcmStartup = 10 * time.Second

// StartAPIServer starts the API server again, on the same address, with the same data and
// certificates, so that every client made before the stop works again. After an outage
// longer than kcmRenewDeadline the controller manager starts afresh too, as in a production
// control plane, where it would have lost its lease and been restarted; and so does one that
// was still starting when the API server stopped. A member's kube-scheduler and kwok start
// afresh after every outage (see nodes.restart).
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if c.sites != nil {
		return errAcrossSites
	}
	if err := c.env.ControlPlane.APIServer.Start(); err != nil {
		return err
	}
	c.down = false
	if err := waitReady(ctx, c.Config); err != nil {
		return err
	}
	if time.Since(c.stopped) >= kcmRenewDeadline || c.kcmStarting {
		c.stopControllerManager()
		if err := c.startControllerManager(); err != nil {
			return err
		}
	}
	return c.nodes.restart(ctx, c)
}

// Wipe loses the cluster's state, as a hub whose etcd was lost and rebuilt empty: it stops
// the API server and etcd, removes etcd's data, starts both again on the same addresses
// with the same certificates and signing key, installs the CRDs as at the first start, and
// starts the controller manager afresh. Every client made before works again against a
// cluster that holds nothing but what an API server makes itself (a kube-system namespace
// with a new UID among it).
func (c *Cluster) Wipe(ctx context.Context) error {
	if c.nodes != nil {
		return errors.New("wiping a cluster with nodes, which would have to be registered again")
	}
	if c.sites != nil {
		return errAcrossSites
	}
	c.stopped, c.down = time.Now(), true
	c.stopControllerManager()
	etcd := c.env.ControlPlane.Etcd
	if err := errors.Join(c.env.ControlPlane.APIServer.Stop(), etcd.Stop()); err != nil {
		return err
	}
	if err := os.RemoveAll(etcd.DataDir); err != nil {
		return err
	}
	if err := etcd.Start(); err != nil {
		return fmt.Errorf("starting etcd: %w", err)
	}
	if err := c.env.ControlPlane.APIServer.Start(); err != nil {
		return err
	}
	c.down = false
	if err := waitReady(ctx, c.Config); err != nil {
		return err
	}
	if _, err := envtest.InstallCRDs(c.Config, envtest.CRDInstallOptions{
		Paths: c.env.CRDDirectoryPaths, ErrorIfPathMissing: true, Scheme: c.env.Scheme,
	}); err != nil {
		return fmt.Errorf("installing the CRDs: %w", err)
	}
	return c.startControllerManager()
}

// unknownPath is a path no API server serves: it answers 404 once it installed all its paths,
// and 503 with Retry-After: 5 before.
const unknownPath = "/apis/unknown.testbed.custody.dev"

// waitReady waits until the API server answers /readyz and installed all its paths, the
// custom resources' included. /readyz does not wait for the latter: a client started at once,
// as the controller manager after an outage, would be told to come back in five seconds.
func waitReady(ctx context.Context, cfg *rest.Config) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	rc := dc.RESTClient()
	ctx, cancel := context.WithTimeout(ctx, clusterStartTimeout)
	defer cancel()
	for {
		ready := rc.Get().AbsPath("/readyz").MaxRetries(0).Do(ctx).Error()
		if ready == nil && apierrors.IsNotFound(rc.Get().AbsPath(unknownPath).MaxRetries(0).Do(ctx).Error()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("API server at %s not ready: %w", cfg.Host, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stopControllerManager stops the controller manager and waits until it exited.
func (c *Cluster) stopControllerManager() { c.kcm.stop() }

// stop stops the nodes and the controller manager, then the control plane.
func (c *Cluster) stop() error {
	var errs []error
	c.nodes.stop()
	c.stopControllerManager()
	errs = append(errs, c.stopSites())
	if c.env != nil {
		errs = append(errs, c.env.Stop())
	}
	errs = append(errs, c.log.Close())
	return errors.Join(errs...)
}
