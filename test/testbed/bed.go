package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	csiaddonsv1alpha1 "github.com/csi-addons/kubernetes-csi-addons/api/csiaddons/v1alpha1"
	snapshotv1 "github.com/kubernetes-csi/external-snapshotter/client/v6/apis/volumesnapshot/v1"

	"github.com/custody-dev/custody/api"
	"github.com/custody-dev/custody/test/simstorage"
)

// HubName is the name of the hub cluster and of its kubeconfig file.
const HubName = "hub"

// Options describe a bed.
type Options struct {
	// Dir holds the bed's state and kubeconfigs, and is kept after Stop. Empty: a temporary
	// directory that Stop removes.
	Dir string
	// Members are the member clusters to start.
	Members []MemberOptions
	// Scheme is the scheme of the clients the bed hands out. Nil: Scheme().
	Scheme *runtime.Scheme
	// HubCRDs are directories of CRDs to install into the hub. Nil: config/crd/bases.
	HubCRDs []string
	// MemberCRDs are directories of CRDs to install into every member. Nil: hack/crds, the
	// third-party CRDs (VolumeSnapshot, VolSync, NetworkFence).
	MemberCRDs []string
	// VolSync plays VolSync's movers and a CSI snapshotter in every member (package
	// simstorage), for LocationPairs to replicate through.
	VolSync bool
	// Nodes is how many nodes each member has; zero means DefaultNodes. kwok plays them and
	// their kubelets, and a kube-scheduler binds pods to them, so that a member's pods run and
	// its Deployments and StatefulSets become Ready, as in a cluster.
	Nodes int
	// NoNodes leaves the members without nodes, kube-scheduler and kwok: their pods are made
	// but stay Pending, and a claim is never in use by a pod. For a test that must not pay for
	// them, or that needs pods never to run.
	NoNodes bool
	// HubSites is how many sites the hub spans. 0 or 1: one etcd and one API server. An odd
	// number from 3: an etcd member in every site, HubSiteNames, and an API server and a
	// kube-controller-manager with leader election in each but the last, the Witness; the
	// hub's Config reaches whichever API server answers, and Cluster.StopSite loses a site.
	HubSites int
}

// MemberOptions describe one member cluster.
type MemberOptions struct {
	// Name is the member's name, also the name of its kubeconfig file.
	Name string
	// Domains are the storage domains the member reaches.
	Domains []string
	// BinderSyncPeriod is how often the member's PV binder goes through every claim and PV
	// besides their events (kube-controller-manager's --pvclaimbinder-sync-period). Zero:
	// Kubernetes' default, 15 s, as a production member runs; a test that sets it says why.
	BinderSyncPeriod time.Duration
	// Site is the hub site the member runs in, one of HubSiteNames, for a hub across sites:
	// what loses the site loses the member with it. Empty: none.
	Site string
}

// TwoMembers is the smallest bed with a move in it: members m1 and m2 share storage domain
// "shared".
func TwoMembers() Options {
	return Options{Members: []MemberOptions{
		{Name: "m1", Domains: []string{"shared"}},
		{Name: "m2", Domains: []string{"shared"}},
	}}
}

// Bed is a running hub with its members and storage domains.
type Bed struct {
	// Dir holds the bed's state; the kubeconfigs are Dir/<cluster>.kubeconfig.
	Dir     string
	Hub     *Cluster
	Members []*Cluster

	storage   map[string]*simstorage.Storage
	volsync   *simstorage.VolSync
	temporary bool
	reaper    *exec.Cmd
	cancel    context.CancelFunc
	stopOnce  sync.Once
	stopErr   error
}

// Start starts the hub and the members, their storage domains, and a reaper that cleans up
// if the process dies before Stop. On error, whatever had started is stopped.
func Start(ctx context.Context, opts Options) (_ *Bed, err error) {
	binDir, err := BinDir()
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	opts = withDefaults(opts, root)
	if err := checkHubSites(opts.HubSites); err != nil {
		return nil, err
	}

	b := &Bed{Dir: opts.Dir, storage: map[string]*simstorage.Storage{}}
	if b.Dir == "" {
		if b.Dir, err = os.MkdirTemp("", "custody-bed-"); err != nil {
			return nil, err
		}
		b.temporary = true
	} else if b.Dir, err = filepath.Abs(b.Dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.Dir, 0o755); err != nil {
		return nil, err
	}
	reaper, err := startReaper(b.Dir, b.temporary)
	if err != nil {
		return nil, fmt.Errorf("starting the reaper: %w", err)
	}
	b.reaper = reaper
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Stop())
		}
	}()

	// Start the control planes side by side: most of their start-up is waiting.
	b.Members = make([]*Cluster, len(opts.Members))
	g := new(errgroup.Group)
	nodeCount := opts.Nodes
	if opts.NoNodes {
		nodeCount = 0
	}
	start := func(slot **Cluster, name string, role Role, crds, sites []string, kcmFlags ...string) {
		g.Go(func() error {
			c, err := startCluster(name, role, filepath.Join(b.Dir, "clusters", name), binDir,
				filepath.Join(b.Dir, name+".kubeconfig"), crds, opts.Scheme, kcmFlags, nodeCount, sites)
			*slot = c
			return err
		})
	}
	var sites []string
	if opts.HubSites > 1 {
		sites = HubSiteNames(opts.HubSites)
	}
	start(&b.Hub, HubName, RoleHub, opts.HubCRDs, sites)
	for i, m := range opts.Members {
		if m.Site != "" && !slices.Contains(sites, m.Site) {
			return b, fmt.Errorf("member %s is in site %q, which the hub does not have: its sites are %v", m.Name, m.Site, sites)
		}
		var flags []string
		if m.BinderSyncPeriod > 0 {
			flags = append(flags, "--pvclaimbinder-sync-period="+m.BinderSyncPeriod.String())
		}
		start(&b.Members[i], m.Name, RoleMember, opts.MemberCRDs, nil, flags...)
	}
	if err := g.Wait(); err != nil {
		return b, err
	}

	storageCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.cancel = cancel
	for i, m := range opts.Members {
		b.Members[i].Site = m.Site
		b.Members[i].NodeCIDRs = []string{nodeCIDR(i)}
		if err := b.Members[i].createNodes(ctx); err != nil {
			return b, fmt.Errorf("registering the nodes of %s: %w", m.Name, err)
		}
		for _, domain := range m.Domains {
			if b.storage[domain] == nil {
				b.storage[domain] = simstorage.New(domain)
			}
			if err := b.storage[domain].Attach(storageCtx, m.Name, b.Members[i].Config, b.Members[i].NodeCIDRs); err != nil {
				return b, fmt.Errorf("attaching %s to storage domain %s: %w", m.Name, domain, err)
			}
		}
	}
	if opts.VolSync {
		b.volsync = simstorage.NewVolSync()
		for i, m := range opts.Members {
			var reaches []*simstorage.Storage
			for _, domain := range m.Domains {
				reaches = append(reaches, b.storage[domain])
			}
			if err := b.volsync.Attach(storageCtx, m.Name, b.Members[i].Config, reaches); err != nil {
				return b, fmt.Errorf("playing VolSync in %s: %w", m.Name, err)
			}
		}
	}
	return b, nil
}

// VolSync is the player of VolSync and the snapshotter, or nil when Options.VolSync was not
// set.
func (b *Bed) VolSync() *simstorage.VolSync { return b.volsync }

// nodeCIDR is the address range of the nodes of the bed's member i (from 0), as its storage
// domains see them: 10.1.0.0/24, 10.2.0.0/24, … and, past the 255th member, 10.0.1.0/24 on.
func nodeCIDR(i int) string {
	n := i + 1
	return fmt.Sprintf("10.%d.%d.0/24", n%256, n/256)
}

// Scheme knows Kubernetes' types, CRDs, csi-addons' NetworkFences, VolSync's and the
// snapshotter's types, and Custody's APIs.
func Scheme() *runtime.Scheme {
	s := api.NewScheme()
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(csiaddonsv1alpha1.AddToScheme(s))
	utilruntime.Must(volsyncv1alpha1.AddToScheme(s))
	utilruntime.Must(snapshotv1.AddToScheme(s))
	return s
}

func withDefaults(opts Options, root string) Options {
	if opts.Scheme == nil {
		opts.Scheme = Scheme()
	}
	if opts.HubCRDs == nil {
		opts.HubCRDs = []string{filepath.Join(root, "config", "crd", "bases")}
	}
	if opts.MemberCRDs == nil {
		opts.MemberCRDs = []string{filepath.Join(root, "hack", "crds")}
	}
	if opts.Nodes == 0 {
		opts.Nodes = DefaultNodes
	}
	return opts
}

// Member returns the member called name, or nil.
func (b *Bed) Member(name string) *Cluster {
	i := slices.IndexFunc(b.Members, func(c *Cluster) bool { return c != nil && c.Name == name })
	if i < 0 {
		return nil
	}
	return b.Members[i]
}

// Storage returns the storage domain called name, or nil.
func (b *Bed) Storage(name string) *simstorage.Storage { return b.storage[name] }

// Processes lists the bed's running processes with their memory use.
func (b *Bed) Processes() []Process { return processesNaming(b.Dir) }

// Stop stops the storage drivers, every control plane and the reaper, and removes a
// temporary directory. It is safe to call more than once.
func (b *Bed) Stop() error {
	b.stopOnce.Do(func() {
		if b.cancel != nil {
			b.cancel()
			for _, s := range b.storage {
				s.Wait()
			}
			if b.volsync != nil {
				b.volsync.Wait()
			}
		}
		var mu sync.Mutex
		var errs []error
		var wg sync.WaitGroup
		for _, c := range append([]*Cluster{b.Hub}, b.Members...) {
			if c == nil {
				continue
			}
			wg.Go(func() {
				err := c.stop()
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			})
		}
		wg.Wait()
		if b.temporary {
			errs = append(errs, os.RemoveAll(b.Dir))
		}
		if b.reaper != nil {
			_ = syscall.Kill(-b.reaper.Process.Pid, syscall.SIGKILL)
			_ = b.reaper.Wait()
		}
		b.stopErr = errors.Join(errs...)
	})
	return b.stopErr
}
