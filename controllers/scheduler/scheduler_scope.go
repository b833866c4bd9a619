package scheduler

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/internal/leases"
	"github.com/custody-dev/custody/fencing"
)

// scope is what one reconcile of a namespace read.
type scope struct {
	ns            *corev1.Namespace
	placements    []*schedulingv1alpha1.Placement
	locations     []schedulingv1alpha1.Location
	targets       []workloadv1alpha1.SyncTarget
	loads         map[string]int
	volumeDomains []string
	// replicas are the keys of the targets the namespace's claims are to be restored on.
	replicas []string
	// lostIn is, by name, how long until each Unreachable target is lost (see Candidate).
	lostIn map[string]time.Duration
}

func (r *Reconciler) observe(ctx context.Context, ns *corev1.Namespace) (*scope, error) {
	s := &scope{ns: ns}
	if v := ns.Annotations[schedulingv1alpha1.PlacementAnnotation]; v != "" {
		for _, name := range strings.Split(v, ",") {
			p := &schedulingv1alpha1.Placement{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, p); apierrors.IsNotFound(err) {
				continue
			} else if err != nil {
				return nil, err
			}
			if p.InEffect() {
				s.placements = append(s.placements, p)
			}
		}
	}
	locations := &schedulingv1alpha1.LocationList{}
	targets := &workloadv1alpha1.SyncTargetList{}
	claims := &corev1.PersistentVolumeClaimList{}
	// Read-only lists straight from the cache: this runs once per namespace.
	for _, l := range []client.ObjectList{locations, targets} {
		if err := r.Client.List(ctx, l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
	}
	if err := r.Client.List(ctx, claims, client.InNamespace(ns.Name), client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	s.locations, s.targets = locations.Items, targets.Items
	lostIn, err := r.lostIn(ctx, s.targets)
	if err != nil {
		return nil, err
	}
	s.lostIn = lostIn
	if s.loads, err = r.loads(ctx, s.candidateKeys(), ns.Name); err != nil {
		return nil, err
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		if d := holdingDomain(c, s.targets); d != "" && !slices.Contains(s.volumeDomains, d) {
			s.volumeDomains = append(s.volumeDomains, d)
		}
		if key, snapshot, _ := storagev1alpha1.RestoreFrom(c.Annotations); snapshot != "" && !slices.Contains(s.replicas, key) {
			s.replicas = append(s.replicas, key)
		}
	}
	sort.Strings(s.volumeDomains)
	return s, nil
}

// holdingDomain is the storage domain that a claim holds its namespace to: its volume's, ""
// for none. A claim that a switch of Locations left waiting, with no replica or no
// protection, keeps its data where it was: it does not hold its namespace there. Nor does
// one to be restored from a replica on a target that does not reach its volume's domain:
// coordination restores it there, in that target's domain, so the namespace goes where the
// replica is at once, in the write that takes it from where it was, not after every claim
// of it was set aside. A replica's target that reaches the domain takes the volume as a
// move would, and the domain holds.
func holdingDomain(c *corev1.PersistentVolumeClaim, targets []workloadv1alpha1.SyncTarget) string {
	d := c.Annotations[storagev1alpha1.DomainAnnotation]
	key, snapshot, asked := storagev1alpha1.RestoreFrom(c.Annotations)
	switch {
	case !asked:
		return d
	case snapshot == "":
		return ""
	}
	if t := workloadv1alpha1.TargetWithKey(targets, key); t != nil && slices.Contains(t.Spec.StorageDomains, d) {
		return d
	}
	return ""
}

// desiredTargets chooses one target per Location of the namespace's Placements. The targets
// of a Location that cannot be read (deleted, or its selector does not parse) stay as they are.
func (s *scope) desiredTargets() ([]string, []Result) {
	current := workloadv1alpha1.ActiveTargets(s.ns)
	var keys []string
	var results []Result
	keepUnclaimed := false
	for _, loc := range s.locationNames() {
		targets, ok := schedulingv1alpha1.LocationTargets(loc, s.locations, s.targets)
		if !ok {
			keepUnclaimed = true
			continue
		}
		req := Request{VolumeDomains: s.volumeDomains}
		for i := range targets {
			c := s.candidate(loc, &targets[i])
			if req.Current == "" && slices.Contains(current, c.Key) && !slices.Contains(keys, c.Key) {
				req.Current = c.Key
			}
			req.Candidates = append(req.Candidates, c)
		}
		res := Schedule(req)
		results = append(results, res)
		if res.Key != "" && !slices.Contains(keys, res.Key) {
			keys = append(keys, res.Key)
		}
	}
	if keepUnclaimed {
		for _, k := range current {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, results
}

// candidateKeys are the keys of the targets of the namespace's Locations, each once: the
// loads a choice reads.
func (s *scope) candidateKeys() []string {
	var keys []string
	for _, loc := range s.locationNames() {
		targets, _ := schedulingv1alpha1.LocationTargets(loc, s.locations, s.targets)
		for i := range targets {
			if k := workloadv1alpha1.ToSyncTargetKey(targets[i].Name); !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func (s *scope) locationNames() []string {
	var out []string
	for _, p := range s.placements {
		if !slices.Contains(out, p.Status.SelectedLocation) {
			out = append(out, p.Status.SelectedLocation)
		}
	}
	sort.Strings(out)
	return out
}

func (s *scope) candidate(location string, t *workloadv1alpha1.SyncTarget) Candidate {
	key := workloadv1alpha1.ToSyncTargetKey(t.Name)
	presence, _ := workloadv1alpha1.PresenceOn(s.ns, key)
	return Candidate{
		Name: t.Name,
		Key:  key,
		Usable: slices.ContainsFunc(s.placements, func(p *schedulingv1alpha1.Placement) bool {
			return p.Status.SelectedLocation == location && p.MayUse(t)
		}),
		Ready:         t.IsReady(),
		LostIn:        s.lostIn[t.Name],
		Unschedulable: t.Spec.Unschedulable,
		Fenced:        t.IsFenced(),
		Gone:          t.Departing(),
		Priority:      t.Spec.Priority,
		Domains:       t.Spec.StorageDomains,
		Load:          s.loads[key],
		Leaving:       presence.Leaving,
		Replicas:      slices.Contains(s.replicas, key),
	}
}

// loads counts the namespaces on each of the target keys, exclude left out, with those the
// scheduler placed that the cache does not show yet. It reads the namespaces of each key from
// the cache's index (targetIndex), so that one choice reads the namespaces of the targets it
// chooses among, not every namespace of the hub.
func (r *Reconciler) loads(ctx context.Context, keys []string, exclude string) (map[string]int, error) {
	loads := make(map[string]int, len(keys))
	for _, k := range keys {
		list := &corev1.NamespaceList{}
		if err := r.Client.List(ctx, list, client.MatchingFields{targetIndex: k}, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range list.Items {
			if list.Items[i].Name != exclude {
				loads[k]++
			}
		}
	}
	var err error
	r.assumed.count(loads, exclude, func(name string) ([]string, bool) {
		ns := &corev1.Namespace{}
		switch e := r.Client.Get(ctx, client.ObjectKey{Name: name}, ns); {
		case apierrors.IsNotFound(e):
			return nil, false
		case e != nil:
			// Kept, and counted: the choice fails on err anyway.
			err = e
			return nil, true
		}
		return workloadv1alpha1.ActiveTargets(ns), true
	})
	return loads, err
}

// lostIn tells, by name, how long until each Unreachable target is lost (fencing.LostIn,
// after its fence delay, which may need its heartbeat Lease); a target that answers, or is
// lost already, is left out.
func (r *Reconciler) lostIn(ctx context.Context, targets []workloadv1alpha1.SyncTarget) (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	now := r.now()
	for i := range targets {
		t := &targets[i]
		since := t.UnreachableSince()
		if since.IsZero() {
			continue
		}
		lease, err := leases.Of(ctx, r.Client, t.Name)
		if err != nil {
			return nil, err
		}
		if left := fencing.LostIn(since, now, fencing.Delay(t, r.FenceDelay, r.HeartbeatGrace, lease)); left > 0 {
			out[t.Name] = left
		}
	}
	return out, nil
}

// assumedPlacements remembers the targets the scheduler wrote until the cache shows them, so
// that the next choice counts them in the load even before the watch delivers the write.
type assumedPlacements struct {
	mu sync.Mutex
	m  map[string][]string
}

func (a *assumedPlacements) add(ns string, keys []string) {
	if len(keys) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string][]string{}
	}
	a.m[ns] = append(a.m[ns], keys...)
}

// forget drops what was assumed of a namespace whose write failed.
func (a *assumedPlacements) forget(ns string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.m, ns)
}

// count adds to loads the targets assumed for namespaces other than exclude that the cache
// does not show yet, and forgets the assumptions it shows, or whose namespace it no longer
// has; shown reads a namespace's active targets from the cache.
func (a *assumedPlacements) count(loads map[string]int, exclude string, shown func(ns string) (keys []string, found bool)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for name, assumed := range a.m {
		on, found := shown(name)
		missing := slices.DeleteFunc(slices.Clone(assumed), func(k string) bool { return slices.Contains(on, k) })
		if !found || len(missing) == 0 {
			delete(a.m, name)
			continue
		}
		if name != exclude {
			for _, k := range missing {
				loads[k]++
			}
		}
	}
}
