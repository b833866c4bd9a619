package environment

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers"
	"github.com/custody-dev/custody/controllers/syncer"
	"github.com/custody-dev/custody/controllers/syncer/credential"
	"github.com/custody-dev/custody/fencing"
	"github.com/custody-dev/custody/test/testbed"
)

// LocationLabel is the label that ties the environment's SyncTargets to their Location.
const LocationLabel = "custody.dev/location"

// Options describe an environment.
type Options struct {
	// Dir keeps the state between runs; empty means a temporary directory.
	Dir string
	// Locations are the Locations to make, each with its members and storage domain.
	Locations []LocationOptions
	// HeartbeatPeriod is the syncers' heartbeat period; zero means 1s.
	HeartbeatPeriod time.Duration
	// HeartbeatGrace is how long a target may miss heartbeats before it is Unreachable;
	// zero means three periods.
	HeartbeatGrace time.Duration
	// MetricsAddr is where the controller serves its metrics, over HTTPS to the identities
	// the hub allows to get /metrics (MetricsToken), as deployed; empty means not served.
	MetricsAddr string
	// VolSync plays VolSync and a snapshotter in every member (testbed.Options.VolSync).
	VolSync bool
	// NoNodes leaves the members without nodes, so that their pods stay Pending
	// (testbed.Options.NoNodes). By default each member has testbed.DefaultNodes nodes, on
	// which its workloads run and become Ready.
	NoNodes bool
	// HubSites spans the hub across that many sites (testbed.Options.HubSites): a replica of
	// the controller runs beside each main site's API server, electing a leader, and the
	// syncers reach whichever API server answers. Each Location names its site.
	HubSites int
}

// LocationOptions describe one Location.
type LocationOptions struct {
	Name string
	// Domain is the storage domain its members share.
	Domain string
	// Members are the names of its member clusters, also their SyncTargets' names.
	Members []string
	// Site is the hub site its members run in, for a hub across sites (Options.HubSites).
	Site string
}

// Default is the local environment's default: n Locations of m members each, every
// Location over a storage domain of its own.
func Default(locations, members int) Options {
	var o Options
	for i := range locations {
		loc := LocationOptions{Name: fmt.Sprintf("location-%d", i+1), Domain: fmt.Sprintf("storage-%d", i+1)}
		for j := range members {
			loc.Members = append(loc.Members, fmt.Sprintf("member-%d-%d", i+1, j+1))
		}
		o.Locations = append(o.Locations, loc)
	}
	return o
}

// OneLocation is the smallest environment with a move in it: one Location of two members,
// m1 and m2, sharing storage domain "shared".
func OneLocation() Options {
	return Options{Locations: []LocationOptions{{Name: "loc", Domain: "shared", Members: []string{"m1", "m2"}}}}
}

// Other is the member of OneLocation's Location that is not key.
func Other(key string) string {
	if key == "m1" {
		return "m2"
	}
	return "m1"
}

// Environment is a running Custody.
type Environment struct {
	*testbed.Bed
	opts Options

	mu sync.Mutex
	// controllers are the controller's replicas by site: one, at site "", but in a hub
	// across sites.
	controllers map[string]*runner
	// metricsSite is the site of the replica that serves Options.MetricsAddr: one replica of
	// the process at a time can.
	metricsSite string
	syncers     map[string]*runner
	// hubConfigs reach the hub as each member's syncer, by member.
	hubConfigs map[string]*rest.Config
	// credentials renew the hub token of each member's syncer, across its restarts.
	credentials map[string]*credential.Renewer
	// lifecycle serializes StopMember and StartMember.
	lifecycle sync.Mutex
}

// Start starts the bed, registers its members and Locations on the hub, and runs the
// controller and the syncers. It returns once they run; WaitReady waits for the targets.
func Start(ctx context.Context, o Options) (_ *Environment, err error) {
	if o.HeartbeatPeriod == 0 {
		o.HeartbeatPeriod = time.Second
	}
	bedOpts := testbed.Options{Dir: o.Dir, VolSync: o.VolSync, NoNodes: o.NoNodes, HubSites: o.HubSites}
	for _, l := range o.Locations {
		for _, m := range l.Members {
			bedOpts.Members = append(bedOpts.Members, testbed.MemberOptions{Name: m, Domains: []string{l.Domain}, Site: l.Site})
		}
	}
	bed, err := testbed.Start(ctx, bedOpts)
	if err != nil {
		return nil, err
	}
	e := &Environment{Bed: bed, opts: o, controllers: map[string]*runner{}, syncers: map[string]*runner{}, hubConfigs: map[string]*rest.Config{},
		credentials: map[string]*credential.Renewer{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()
	if err := e.register(ctx); err != nil {
		return e, err
	}
	if err := e.bindMetricsReader(ctx); err != nil {
		return e, err
	}
	if err := e.StartController(); err != nil {
		return e, err
	}
	for _, m := range e.Members {
		if err := e.StartSyncer(m.Name); err != nil {
			return e, err
		}
	}
	return e, nil
}

// register installs Custody's hub configuration, joins each member with `kubectl custody
// join`, as an admin would, and creates (or keeps) the Locations. Each SyncTarget fences
// with its member's node CIDRs and the NetworkFenceClass of its domain; a SyncTarget kept
// from an earlier run gets that fencing too. Each syncer reaches the hub with the identity
// join made for its target, under the hub's admission policy.
func (e *Environment) register(ctx context.Context) error {
	if err := e.installHub(ctx); err != nil {
		return err
	}
	for _, l := range e.opts.Locations {
		loc := &schedulingv1alpha1.Location{
			ObjectMeta: metav1.ObjectMeta{Name: l.Name, Labels: map[string]string{LocationLabel: l.Name}},
			Spec: schedulingv1alpha1.LocationSpec{InstanceSelector: metav1.LabelSelector{
				MatchLabels: map[string]string{LocationLabel: l.Name},
			}},
		}
		if err := e.Hub.Client.Create(ctx, loc); client.IgnoreAlreadyExists(err) != nil {
			return fmt.Errorf("registering %s: %w", l.Name, err)
		}
		for _, name := range l.Members {
			cfg, err := e.join(ctx, l, e.Member(name))
			if err != nil {
				return err
			}
			e.hubConfigs[name] = cfg
		}
	}
	return nil
}

// StartController runs the hub controllers: one replica, or, in a hub across sites, one
// beside the API server of each main site that is up and runs none (StartSite may have
// started its site's), electing a leader. A replica that exits, for instance because it
// started while the hub did not answer, runs again, as its Deployment's would. A
// StateError says that every such site runs one already.
func (e *Environment) StartController() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	sites := slices.DeleteFunc(e.replicaSites(), func(site string) bool { return e.controllers[site] != nil })
	if len(sites) == 0 {
		return &StateError{"the controller runs already"}
	}
	// The first replica of a controller that ran nowhere leads, so that a spec knows which
	// site's loss takes the leader. The Lease's holder is read before that replica starts:
	// read after, it may be the new replica already.
	lead := len(e.controllers) == 0 && sites[0] != ""
	ctx, cancel := context.WithTimeout(context.Background(), leaderWait)
	defer cancel()
	var before string
	if lead {
		var err error
		if before, _, err = e.ControllerLeader(ctx); err != nil {
			return err
		}
	}
	for _, site := range sites {
		metrics := len(e.controllers) == 0
		if metrics {
			e.metricsSite = site
		}
		e.controllers[site] = run(restarting("controller "+site, func(ctx context.Context) error {
			return e.runController(ctx, site, metrics)
		}))
		if lead {
			lead = false
			if err := e.waitNewLeader(ctx, before); err != nil {
				return err
			}
		}
	}
	return nil
}

// runController runs a new manager of the hub controllers at site until ctx ends; with
// metrics, it serves them at Options.MetricsAddr.
func (e *Environment) runController(ctx context.Context, site string, metrics bool) error {
	addr := e.opts.MetricsAddr
	if addr == "" || !metrics {
		addr = "0"
	}
	return controllers.Run(ctx, e.controllerCfg(site), e.leaderElection(controllers.RunOptions{
		// The brake of cmd/controller's defaults, as a production hub runs.
		Options:     controllers.Options{HeartbeatGrace: e.opts.HeartbeatGrace, Brake: fencing.DefaultBrake},
		MetricsAddr: addr, MetricsSecure: true, ProbeAddr: "0", Restartable: true,
	}))
}

// controllerUser is the hub identity of the controller: config/rbac's ServiceAccount.
const controllerUser = "system:serviceaccount:custody-system:custody-controller"

// StopController stops every replica of the hub controllers and waits until they stopped.
func (e *Environment) StopController() error {
	e.mu.Lock()
	rs := e.controllers
	e.controllers = map[string]*runner{}
	e.mu.Unlock()
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.stop())
	}
	return errors.Join(errs...)
}

// StartSyncer runs the syncer of the named member.
func (e *Environment) StartSyncer(name string) error {
	m, err := e.lookUp(name)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.syncers[name] != nil {
		return fmt.Errorf("the syncer of %s runs already", name)
	}
	cred, err := e.credential(name, m)
	if err != nil {
		return err
	}
	o := syncer.Options{
		HubConfig: e.hubConfigs[name], HubServers: e.Hub.Servers(), MemberConfig: m.Config, SyncTargetName: name,
		HeartbeatPeriod: e.opts.HeartbeatPeriod, Credential: cred,
	}
	e.syncers[name] = run(restarting("syncer "+name, func(ctx context.Context) error {
		return syncer.Run(ctrl.LoggerInto(ctx, ctrl.Log.WithName("syncer").WithValues("target", name)), o)
	}))
	return nil
}

// HeartbeatPeriod is the syncers' heartbeat period.
func (e *Environment) HeartbeatPeriod() time.Duration { return e.opts.HeartbeatPeriod }

// StopSyncer stops the syncer of the named member and waits until it stopped.
func (e *Environment) StopSyncer(name string) error {
	e.mu.Lock()
	r := e.syncers[name]
	delete(e.syncers, name)
	e.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.stop()
}

// WaitReady waits until the SyncTarget of every member of the environment is Ready; targets
// of no member (a spec's stand-ins) do not count.
func (e *Environment) WaitReady(ctx context.Context) error {
	names := make([]string, 0, len(e.Members))
	for _, m := range e.Members {
		names = append(names, m.Name)
	}
	return targetsReady(ctx, e.Hub.Client, names, "targets")
}

// targetsReady waits until the hub c judges every named SyncTarget Ready; what names them in
// the error.
func targetsReady(ctx context.Context, c client.Client, names []string, what string) error {
	for {
		list := &workloadv1alpha1.SyncTargetList{}
		if err := c.List(ctx, list); err != nil {
			return err
		}
		ready := 0
		for _, t := range list.Items {
			if t.IsReady() && slices.Contains(names, t.Name) {
				ready++
			}
		}
		if ready == len(names) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d %s Ready: %w", ready, len(names), what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Stop stops the syncers, the controller and the bed.
func (e *Environment) Stop() error {
	e.mu.Lock()
	names := slices.Collect(maps.Keys(e.syncers))
	e.mu.Unlock()
	var errs []error
	for _, n := range names {
		errs = append(errs, e.StopSyncer(n))
	}
	errs = append(errs, e.StopController(), e.Bed.Stop())
	return errors.Join(errs...)
}

// restartDelay is how long a syncer or controller that exited waits before it runs again.
const restartDelay = time.Second

// restarting runs f again, after restartDelay, each time it returns before ctx ends, as the
// kubelet restarts a container that exits: a syncer or a controller that starts while the
// hub does not serve its API yet exits, and must come back as it would in a cluster.
func restarting(name string, f func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			err := f(ctx)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			log.Error(err, "Exited; restarting it", "process", name, "after", restartDelay)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(restartDelay):
			}
		}
	}
}

// runner is a goroutine that runs until stopped.
type runner struct {
	cancel context.CancelFunc
	done   chan error
}

func run(f func(context.Context) error) *runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- f(ctx) }()
	return r
}

// stop cancels the goroutine and returns its error, but for the cancellation itself, which a
// goroutine stopped before it got going returns.
func (r *runner) stop() error {
	r.cancel()
	if err := <-r.done; !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
