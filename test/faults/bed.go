package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
)

// The bed's shape and pace. Its heartbeats and fence delay are short, so that a member lost
// for a few seconds is fenced and failed over within a schedule.
const (
	location        = "loc"
	domain          = "shared"
	heartbeatPeriod = 250 * time.Millisecond
	fenceDelay      = time.Second
)

// targets are the members of the bed's Location for most schedules, also their SyncTargets'
// names.
var targets = []string{"m1", "m2", "m3"}

// The Locations of the pair schedules, each over a storage domain of its own: a primary of
// two members and a secondary of one. A pair schedule pairs them for its run alone.
const (
	primary   = "east"
	secondary = "west"
)

var (
	primaryTargets   = []string{"e1", "e2"}
	secondaryTargets = []string{"w1"}
	// pairTargets are the members a pair schedule's faults fall on.
	pairTargets = slices.Concat(primaryTargets, secondaryTargets)
)

// Bed is the long-lived environment the schedules run on, a few at once.
type Bed struct {
	env *environment.Environment
	hub client.Client
	// storages are the storage domains, by name.
	storages map[string]*simstorage.Storage
	obs      *observer
	shared   *shared
	// pairs lets one pair schedule run at a time: a pair protects every namespace of its
	// primary.
	pairs sync.Mutex
	// lostSite is the hub site lost while LoseHubSite holds; the shared fault's lock guards
	// it, as the schedules that draw it at once share the first one's site.
	lostSite string
	cancel   context.CancelFunc
}

// StartBed starts a hub, across hubSites when more than one, and the members of the
// Locations in dir, with VolSync played in each, and nodes unless not nodes, the controller,
// the syncers and an observer of every version of the volumes, and waits until every target
// is Ready. The members run in no site of the hub: a lost site loses the hub's part there.
func StartBed(ctx context.Context, dir string, nodes bool, hubSites int) (_ *Bed, err error) {
	env, err := environment.Start(ctx, environment.Options{
		Dir: dir,
		Locations: []environment.LocationOptions{
			{Name: location, Domain: domain, Members: targets},
			{Name: primary, Domain: primary, Members: primaryTargets},
			{Name: secondary, Domain: secondary, Members: secondaryTargets},
		},
		HeartbeatPeriod: heartbeatPeriod,
		VolSync:         true,
		NoNodes:         !nodes,
		HubSites:        hubSites,
	})
	if err != nil {
		return nil, err
	}
	obsCtx, cancel := context.WithCancel(context.Background())
	b := &Bed{env: env, hub: env.Hub.Client, storages: map[string]*simstorage.Storage{}, shared: newShared(), cancel: cancel}
	for _, d := range []string{domain, primary, secondary} {
		b.storages[d] = env.Storage(d)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, b.Stop())
		}
	}()
	for _, t := range slices.Concat(targets, pairTargets) {
		if err := environment.PatchTarget(ctx, b.hub, t, func(s *workloadv1alpha1.SyncTargetSpec) {
			s.FenceDelay = &metav1.Duration{Duration: fenceDelay}
		}); err != nil {
			return b, err
		}
	}
	members := map[string]*rest.Config{}
	for _, m := range env.Members {
		members[m.Name] = m.Config
	}
	if b.obs, err = watch(obsCtx, env.Hub.Config, members); err != nil {
		return b, err
	}
	return b, env.WaitReady(ctx)
}

// volume finds the volume of the handle in the storage domain that has it.
func (b *Bed) volume(handle string) (simstorage.Volume, *simstorage.Storage) {
	for _, s := range b.storages {
		if v, ok := s.Volume(handle); ok {
			return v, s
		}
	}
	return simstorage.Volume{}, nil
}

// Stop stops the observer and the environment.
func (b *Bed) Stop() error {
	b.cancel()
	return b.env.Stop()
}

// Drained waits until the namespaces of every schedule are gone from the hub, which takes
// every target letting go of them, and tells which one is left after Liveness.
func (b *Bed) Drained(ctx context.Context) error {
	return await(ctx, "every schedule's namespace to go", Liveness, func(ctx context.Context) error {
		list := &corev1.NamespaceList{}
		if err := b.hub.List(ctx, list, client.HasLabels{scheduleLabel}); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			ns := &list.Items[0]
			return fmt.Errorf("%d namespaces left, the first %s on %v", len(list.Items), ns.Name, workloadv1alpha1.Targets(ns))
		}
		return nil
	})
}

// PeakMemory is the sum of the peak resident memory of the bed's processes, in bytes.
func (b *Bed) PeakMemory() uint64 {
	var sum uint64
	for _, p := range b.env.Processes() {
		sum += p.PeakRSS
	}
	return sum
}

// Leftovers lists the bed's processes still running; after Stop there must be none.
func (b *Bed) Leftovers() []string {
	var out []string
	for _, p := range b.env.Processes() {
		out = append(out, p.Name)
	}
	return out
}
