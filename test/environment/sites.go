package environment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/controllers"
	"github.com/custody-dev/custody/test/testbed"
)

// controllerCfg is how a replica of the controller reaches the hub: as the identity
// config/rbac grants it, under config/admission's policies, as its Deployment's in-cluster
// config does; in a hub across sites, at its own site's API server, as a pod reaches its
// cluster's API server through the local kubernetes Service.
func (e *Environment) controllerCfg(site string) *rest.Config {
	cfg := rest.CopyConfig(e.Hub.Config)
	if site != "" {
		cfg = e.Hub.SiteConfig(site)
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: controllerUser}
	return cfg
}

// replicaSites are the sites where a replica of the controller runs: every main site of a
// hub across sites that is up; one replica, at no site, otherwise.
func (e *Environment) replicaSites() []string {
	sites := e.Hub.Sites()
	if len(sites) == 0 {
		return []string{""}
	}
	var up []string
	for _, s := range sites[:len(sites)-1] {
		if !e.Hub.SiteDown(s) {
			up = append(up, s)
		}
	}
	return up
}

// StopSite loses the named site of a hub across sites: at once, the members of the site
// (StopMember) and the hub's kube-controller-manager, API server and etcd member there
// (testbed.Cluster.StopSite); then the controller replica that runs there, as one that
// dies with its site: its API server gone, it cannot hand its leader Lease over, and the
// other replica takes it only once it expires.
func (e *Environment) StopSite(site string) error {
	if err := e.checkSite(site); err != nil {
		return err
	}
	if e.Hub.SiteDown(site) {
		return &StateError{"site " + site + " is down already"}
	}
	var names []string
	for _, m := range e.Members {
		// A member stopped before is lost with the site all the same.
		if s := e.status(m.Name, ""); m.Site == site && s.Syncer {
			names = append(names, m.Name)
		}
	}
	errs := []error{e.stopAtOnce(names, func() error { return e.Hub.StopSite(site) })}
	e.mu.Lock()
	r := e.controllers[site]
	delete(e.controllers, site)
	if e.metricsSite == site {
		e.metricsSite = ""
	}
	e.mu.Unlock()
	if r != nil {
		errs = append(errs, r.stop())
	}
	return errors.Join(errs...)
}

// StartSite brings the named site back: the hub's part there first, then the site's members
// and their syncers, then its controller replica.
func (e *Environment) StartSite(ctx context.Context, site string) error {
	if err := e.checkSite(site); err != nil {
		return err
	}
	if !e.Hub.SiteDown(site) {
		return &StateError{"site " + site + " is up already"}
	}
	if err := e.Hub.StartSite(ctx, site); err != nil {
		return err
	}
	for _, m := range e.Members {
		if m.Site == site {
			if err := e.StartMember(ctx, m.Name); err != nil {
				return err
			}
		}
	}
	if site == testbed.Witness {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.controllers[site] != nil {
		return nil // StartController started it once the site's API server answered
	}
	// Options.MetricsAddr is served by one replica of the process at a time: this one when
	// the one that served it was lost with its site.
	metrics := e.metricsSite == ""
	if metrics {
		e.metricsSite = site
	}
	e.controllers[site] = run(restarting("controller "+site, func(ctx context.Context) error {
		return e.runController(ctx, site, metrics)
	}))
	return nil
}

// leaderElection is how the controller's replicas elect their leader: only in a hub across
// sites, where one runs beside each API server.
func (e *Environment) leaderElection(o controllers.RunOptions) controllers.RunOptions {
	if len(e.Hub.Sites()) > 0 {
		o.LeaderElect, o.LeaderNamespace = true, "custody-system"
	}
	return o
}

// leaderLease is the Lease the controller's replicas elect their leader with.
var leaderLease = client.ObjectKey{Namespace: "custody-system", Name: "custody-controller"}

// ControllerLease is the Lease the controller's replicas elect their leader with.
func (e *Environment) ControllerLease(ctx context.Context) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	return lease, e.Hub.Client.Get(ctx, leaderLease, lease)
}

// ControllerLeader is the identity of the controller replica that holds the leader Lease, and
// when it last renewed it; "" when none holds it.
func (e *Environment) ControllerLeader(ctx context.Context) (string, time.Time, error) {
	lease, err := e.ControllerLease(ctx)
	if err != nil {
		return "", time.Time{}, client.IgnoreNotFound(err)
	}
	var renewed time.Time
	if lease.Spec.RenewTime != nil {
		renewed = lease.Spec.RenewTime.Time
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), renewed, nil
}

// leaderWait is how long StartController waits for the replica it started first to lead.
const leaderWait = time.Minute

// waitNewLeader waits, until ctx ends, for a replica other than before, the one that held the
// leader Lease before the replica just started did, to hold it: the replica just started.
func (e *Environment) waitNewLeader(ctx context.Context, before string) error {
	for {
		holder, _, err := e.ControllerLeader(ctx)
		if err == nil && holder != "" && holder != before {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the controller's first replica did not take the lead from %q: %w", before, errors.Join(err, ctx.Err()))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ErrNoSite is the error for a site the hub does not have.
var ErrNoSite = errors.New("no such site")

// checkSite refuses a site the hub does not have, naming those it has.
func (e *Environment) checkSite(site string) error {
	if slices.Contains(e.Hub.Sites(), site) {
		return nil
	}
	if len(e.Hub.Sites()) == 0 {
		return fmt.Errorf("%w %q: the hub runs in one site (--hub-sites 3 spans it across three)", ErrNoSite, site)
	}
	return fmt.Errorf("%w %q: the hub's sites are %s", ErrNoSite, site, strings.Join(e.Hub.Sites(), ", "))
}

// AcrossSites spans o's hub across n sites (testbed.HubSiteNames), each Location's members in
// a main site, the Locations taking the main sites in turn. n of 0 or 1 leaves o as it is.
func AcrossSites(o Options, n int) Options {
	if n <= 1 {
		return o
	}
	o.HubSites = n
	sites := testbed.HubSiteNames(n)
	main := sites[:len(sites)-1]
	for i := range o.Locations {
		o.Locations[i].Site = main[i%len(main)]
	}
	return o
}
