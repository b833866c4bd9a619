package testbed

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/custody-dev/custody/controllers/reconnect"
)

// Witness is the site of a hub across sites that holds only an etcd member, the one that
// keeps a quorum when either main site is lost.
const Witness = "witness"

// HubSiteNames are the sites of a hub across n sites (n odd, at least 3): site-1 to
// site-(n-1), each with an API server, and the Witness.
func HubSiteNames(n int) []string {
	names := make([]string, 0, n)
	for i := 1; i < n; i++ {
		names = append(names, fmt.Sprintf("site-%d", i))
	}
	return append(names, Witness)
}

// checkHubSites refuses a number of sites that a hub across sites cannot have: etcd keeps a
// quorum through the loss of one site only with three or more, and an even number buys
// nothing over one fewer.
func checkHubSites(n int) error {
	if n > 1 && (n < 3 || n%2 == 0) {
		return fmt.Errorf("a hub across %d sites: want 1, or an odd number from 3", n)
	}
	return nil
}

// The etcd members' heartbeat interval and election timeout in milliseconds: ten times
// etcd's defaults, which a loaded two-core machine misses, as etcd's tuning guide advises for
// members that far apart in time.
const (
	etcdHeartbeatInterval = "250"
	etcdElectionTimeout   = "2500"
)

// serviceAccountIssuer is the issuer of every API server of a hub across sites, so that a
// token that one of them gave is valid at the others.
const serviceAccountIssuer = "https://hub.custody.test"

// hubSite is what one site of a hub across sites runs: an etcd member and, but in the
// Witness, an API server over the whole etcd cluster and a kube-controller-manager with
// leader election.
type hubSite struct {
	name      string
	etcd      *envtest.Etcd
	apiServer *envtest.APIServer
	// config reaches the site's API server as the bed's admin; kubeconfig is its file.
	config     *rest.Config
	kubeconfig string
	kcm        *daemon
	down       bool
}

// planSites prepares the etcd members of a hub across the named sites, the first of which
// c.env starts with its API server; the others' etcd members start in startSiteEtcds.
func (c *Cluster) planSites(names []string) error {
	var peers, clients, initial []string
	for _, name := range names {
		peer, err := FreeAddr()
		if err != nil {
			return err
		}
		client, err := FreeAddr()
		if err != nil {
			return err
		}
		peers, clients = append(peers, "http://"+peer), append(clients, "http://"+client)
		initial = append(initial, name+"=http://"+peer)
	}
	for i, name := range names {
		client, err := url.Parse(clients[i])
		if err != nil {
			return err
		}
		e := &envtest.Etcd{
			Path: filepath.Join(c.binDir, "etcd"), DataDir: filepath.Join(c.dir, "etcd-"+name), URL: client,
			Out: c.log, Err: c.log, StartTimeout: clusterStartTimeout, StopTimeout: etcdStopTimeout,
		}
		e.Configure().Set("name", name).Set("listen-peer-urls", peers[i]).Set("initial-advertise-peer-urls", peers[i]).
			Set("initial-cluster", strings.Join(initial, ",")).Set("initial-cluster-state", "new").
			Set("initial-cluster-token", c.Name).
			Set("heartbeat-interval", etcdHeartbeatInterval).Set("election-timeout", etcdElectionTimeout)
		c.sites = append(c.sites, &hubSite{name: name, etcd: e})
	}
	first := c.sites[0]
	c.env.ControlPlane.Etcd = first.etcd
	// envtest gives the first member the control plane's stop timeout as it starts it, and a
	// member keeps the timeout it started with: it bounds the first API server's stop too.
	c.env.ControlPlaneStopTimeout = etcdStopTimeout
	first.apiServer = c.env.ControlPlane.APIServer
	// Each API server lists its own site's etcd member first.
	for i, s := range c.sites[:len(c.sites)-1] {
		if s.apiServer == nil {
			s.apiServer = &envtest.APIServer{Path: filepath.Join(c.binDir, "kube-apiserver"), CertDir: first.apiServer.CertDir, Out: c.log, Err: c.log,
				StartTimeout: clusterStartTimeout, StopTimeout: stopTimeout, EtcdURL: s.etcd.URL}
			configureAPIServer(s.apiServer, c.signingKey)
		}
		s.apiServer.Configure().Set("etcd-servers", strings.Join(append([]string{clients[i]}, slices.Delete(slices.Clone(clients), i, i+1)...), ",")).
			Set("service-account-issuer", serviceAccountIssuer)
	}
	return nil
}

// configureAPIServer sets the arguments every API server of the bed runs with.
func configureAPIServer(a *envtest.APIServer, signingKey string) {
	// Close watches after 2s on shutdown instead of waiting 60s for them to go idle.
	a.Configure().Set("shutdown-send-retry-after", "true").
		Set("service-account-key-file", signingKey).Set("service-account-signing-key-file", signingKey)
}

// startSiteEtcds starts the etcd members of every site but the first, which c.env starts:
// each waits for a quorum, so they start side by side.
func (c *Cluster) startSiteEtcds(g *errgroup.Group) {
	for _, s := range c.sites[1:] {
		g.Go(s.etcd.Start)
	}
}

// startSites starts the API servers of the sites but the first, which share its serving
// certificate and its client CA, writes each main site's admin kubeconfig, and makes Config
// reach whichever API server answers. Called once c.env runs, and before the controller
// managers start.
func (c *Cluster) startSites(ctx context.Context) error {
	first := c.sites[0]
	authn := first.apiServer.SecureServing.Authn
	for _, s := range c.sites[1 : len(c.sites)-1] {
		s.apiServer.SecureServing.Authn = authn
		if err := s.apiServer.Start(); err != nil {
			return fmt.Errorf("starting the API server of %s: %w", s.name, err)
		}
	}
	var servers []string
	for _, s := range c.mainSites() {
		s.config = rest.CopyConfig(c.Config)
		s.config.Host = s.apiServer.SecureServing.URL("https", "").String()
		servers = append(servers, s.config.Host)
		s.kubeconfig = filepath.Join(filepath.Dir(c.Kubeconfig), c.Name+"-"+s.name+".kubeconfig")
		if err := writeKubeconfigAt(c.Kubeconfig, s.kubeconfig, s.config.Host); err != nil {
			return err
		}
		if err := waitReady(ctx, s.config); err != nil {
			return err
		}
	}
	cfg, err := reconnect.Servers(c.Config, servers)
	if err != nil {
		return err
	}
	c.Config = cfg
	return nil
}

// writeKubeconfigAt writes the kubeconfig of from, with its clusters' server changed to
// server, to path.
func writeKubeconfigAt(from, path, server string) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return err
	}
	for _, cluster := range cfg.Clusters {
		cluster.Server = server
	}
	return clientcmd.WriteToFile(*cfg, path)
}

// mainSites are the sites with an API server: all but the Witness; none for a cluster of one
// site.
func (c *Cluster) mainSites() []*hubSite {
	if len(c.sites) == 0 {
		return nil
	}
	return c.sites[:len(c.sites)-1]
}

// site is the site called name of a hub across sites, or nil.
func (c *Cluster) site(name string) *hubSite {
	i := slices.IndexFunc(c.sites, func(s *hubSite) bool { return s.name == name })
	if i < 0 {
		return nil
	}
	return c.sites[i]
}

// startSiteControllerManagers starts a kube-controller-manager beside each main site's API
// server, all electing a leader, as the hub's control plane in each site runs one.
func (c *Cluster) startSiteControllerManagers() error {
	for _, s := range c.mainSites() {
		if err := c.startSiteControllerManager(s); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) startSiteControllerManager(s *hubSite) error {
	kubeconfig := filepath.Join(c.dir, "kube-controller-manager-"+s.name+".kubeconfig")
	if _, err := c.writeKubeconfig("system:kube-controller-manager", kubeconfig); err != nil {
		return err
	}
	if err := writeKubeconfigAt(kubeconfig, kubeconfig, s.config.Host); err != nil {
		return err
	}
	kcm, err := c.runControllerManager(kubeconfig, true)
	if err != nil {
		return fmt.Errorf("starting the kube-controller-manager of %s: %w", s.name, err)
	}
	s.kcm = kcm
	return nil
}

// Sites are the names of the sites of a hub across sites, the Witness last; nil for any
// other cluster.
func (c *Cluster) Sites() []string {
	names := make([]string, 0, len(c.sites))
	for _, s := range c.sites {
		names = append(names, s.name)
	}
	return names
}

// SiteConfig reaches the API server of the named main site alone, as the bed's admin; nil for
// the Witness or a site the hub does not have.
func (c *Cluster) SiteConfig(name string) *rest.Config {
	if s := c.site(name); s != nil && s.config != nil {
		return rest.CopyConfig(s.config)
	}
	return nil
}

// Servers are the URLs of the hub's API servers, one per main site; nil for a cluster of one
// site.
func (c *Cluster) Servers() []string {
	var servers []string
	for _, s := range c.sites {
		if s.config != nil {
			servers = append(servers, s.config.Host)
		}
	}
	return servers
}

// EtcdEndpoints are the client URLs of the etcd members of a hub across sites, in the order
// of Sites; nil for a cluster of one site.
func (c *Cluster) EtcdEndpoints() []string {
	var urls []string
	for _, s := range c.sites {
		urls = append(urls, s.etcd.URL.String())
	}
	return urls
}

// LiveKubeconfig is the path of a kubeconfig of an API server that runs: Kubeconfig, or, for
// a hub across sites whose first site is down, the kubeconfig of a main site that is up.
func (c *Cluster) LiveKubeconfig() string {
	for _, s := range c.mainSites() {
		if !s.down {
			return s.kubeconfig
		}
	}
	return c.Kubeconfig
}

// SiteDown tells whether StopSite stopped the named site and StartSite did not start it
// again.
func (c *Cluster) SiteDown(name string) bool {
	s := c.site(name)
	return s != nil && s.down
}

// StopSite loses the named site of a hub across sites at once: its kube-controller-manager,
// its API server and its etcd member stop. The etcd members of the other sites keep a quorum
// and their API servers serve on.
func (c *Cluster) StopSite(name string) error {
	s := c.site(name)
	if s == nil {
		return fmt.Errorf("%s has no site %q: its sites are %v", c.Name, name, c.Sites())
	}
	if s.down {
		return fmt.Errorf("site %s is down already", name)
	}
	s.down = true
	s.kcm.stop()
	s.kcm = nil
	var errs []error
	if s.apiServer != nil {
		errs = append(errs, s.apiServer.Stop())
	}
	return errors.Join(append(errs, s.etcd.Stop())...)
}

// StartSite brings the named site back: its etcd member rejoins the cluster with the data it
// had, and catches up from the others; its API server starts on the same address with the
// same certificates, and its kube-controller-manager with it.
func (c *Cluster) StartSite(ctx context.Context, name string) error {
	s := c.site(name)
	if s == nil || !s.down {
		return fmt.Errorf("%s has no site %q that is down", c.Name, name)
	}
	if err := s.etcd.Start(); err != nil {
		return fmt.Errorf("starting the etcd member of %s: %w", name, err)
	}
	if s.apiServer == nil {
		s.down = false
		return nil
	}
	if err := s.apiServer.Start(); err != nil {
		return fmt.Errorf("starting the API server of %s: %w", name, err)
	}
	if err := waitReady(ctx, s.config); err != nil {
		return err
	}
	s.down = false
	return c.startSiteControllerManager(s)
}

// stopSites stops what every site runs but the first's etcd member, which c.env stops: the
// controller managers, then every API server, then the etcd members, each step side by side.
// An API server whose etcd lost its quorum would not stop within stopTimeout.
func (c *Cluster) stopSites() error {
	var errs []error
	var mu sync.Mutex
	each := func(stop func(*hubSite) error) {
		var wg sync.WaitGroup
		for _, s := range c.sites {
			wg.Go(func() {
				err := stop(s)
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	each(func(s *hubSite) error { s.kcm.stop(); return nil })
	each(func(s *hubSite) error {
		if s.down || s.apiServer == nil {
			return nil
		}
		return s.apiServer.Stop()
	})
	each(func(s *hubSite) error {
		if s.down || s == c.sites[0] {
			return nil
		}
		return s.etcd.Stop()
	})
	return errors.Join(errs...)
}

// errAcrossSites refuses what a hub across sites does with StopSite and StartSite instead.
var errAcrossSites = errors.New("a hub across sites loses and returns whole sites: use StopSite and StartSite")
