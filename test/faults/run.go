package faults

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/simstorage"
)

// Bounds of a schedule's run.
const (
	// Liveness is how long the system may take to settle once every fault healed. A
	// member's kube-controller-manager that outlived a short outage of its API server was
	// seen taking 55 s to act again (its claim protection), and Custody waits for it.
	Liveness = 2 * time.Minute
	// retryFor is how long a workload step retries an API server that does not answer, or
	// waits for what it needs (a claim kept needs its volume bound): as long as the system
	// may take to settle, since a fault may have just healed.
	retryFor = Liveness
	// writePeriod paces the workload's writes.
	writePeriod = 25 * time.Millisecond
)

// Result is what one schedule's run found.
type Result struct {
	Schedule Schedule
	// Violations are the invariants broken and the liveness missed, one line each.
	Violations []string
	// Converged is how long the system took to settle after the last fault healed.
	Converged time.Duration
	// CleanedUp is how long the deletion of what the schedule made took.
	CleanedUp time.Duration
	// Took is the whole run, cleanup included.
	Took time.Duration
	// Writes counts the acknowledged writes; Unwritten, by reason, the workload's tries that
	// found nothing to write to or were refused.
	Writes    int
	Unwritten map[string]int
	// Notes say what the steps did: where an Owner step fell, and which steps were skipped.
	Notes []string
	// Failover is where a pair schedule's failover ended: Completed, or CalledOff.
	Failover string
}

// run is one schedule's run on the bed.
type run struct {
	*Bed
	s  Schedule
	ns string
	// location is where the namespace is placed; targets are the members of the schedule's
	// Locations, and storages their storage domains, which its storage faults fall on.
	location string
	targets  []string
	storages []*simstorage.Storage

	mu sync.Mutex
	// deleteAsked is when each claim's deletion was asked for.
	deleteAsked map[string]time.Time
	// kept are the hub PVs made Retain, by the handle of their volume.
	kept map[string]string
	// orphaned are the hub PVs kept because their claim went while no target held them,
	// by handle.
	orphaned map[string]string
	// setAside are the volumes a failover replaced, by handle: their claims, restored from
	// replicas.
	setAside map[string]string
	// protected is when a pair schedule's pair protected every claim, before the faults.
	protected time.Time
	acks      map[string][]ack
	errs      []string
	notes     []string
	writes    int
	unwritten map[string]int
}

// ack is one write the storage acknowledged, and when.
type ack struct {
	record string
	at     time.Time
}

// Run plays the schedule in a namespace of its own, waits until the system settles, deletes
// what it made and checks every invariant.
func (b *Bed) Run(ctx context.Context, s Schedule) Result {
	start := time.Now()
	r := &run{Bed: b, s: s, ns: fmt.Sprintf("faults-%x", s.Seed), location: location, targets: targets, storages: []*simstorage.Storage{b.storages[domain]},
		deleteAsked: map[string]time.Time{}, kept: map[string]string{}, orphaned: map[string]string{}, setAside: map[string]string{}, acks: map[string][]ack{}}
	res := Result{Schedule: s}
	steps := s.Steps
	if s.paired() {
		b.pairs.Lock()
		defer b.pairs.Unlock()
		start = time.Now()
		r.location, r.targets, r.storages = primary, pairTargets, []*simstorage.Storage{b.storages[primary], b.storages[secondary]}
	}
	if err := r.place(ctx); err != nil {
		res.Violations = []string{"placing the namespace: " + err.Error()}
		return res
	}
	writing, stopWriting := context.WithCancel(ctx)
	wrote := make(chan struct{})
	go func() { defer close(wrote); r.write(writing) }()
	if s.paired() {
		go r.watchPair(writing)
		// The steps up to the protection run first, in order; the others count from then.
		i := slices.IndexFunc(steps, func(st Step) bool { return st.Kind == Protect }) + 1
		r.play(ctx, start, r.lanes(steps[:i])...)
		steps, start = steps[i:], time.Now()
	}
	r.play(ctx, start, r.lanes(steps)...)
	healed := time.Now()
	if err := awaitUntil(ctx, "settle", r.settleBound(healed), r.settled); err != nil {
		r.fail("liveness: %v", err)
	}
	// With schedules running at once, the bed may have settled later than this one's faults,
	// after another's.
	if quiet := r.shared.quietSince(); quiet.After(healed) {
		healed = quiet
	}
	res.Converged = time.Since(healed)
	stopWriting()
	<-wrote
	r.checkWrites()
	if s.paired() {
		r.checkRestores(ctx)
		res.Failover = r.failoverEnd(ctx)
	}
	cleaning := time.Now()
	if err := r.cleanUp(ctx); err != nil {
		r.fail("liveness: cleaning up: %v", err)
	}
	if s.paired() {
		if err := r.unpair(ctx); err != nil {
			r.fail("liveness: unpairing: %v", err)
		}
	}
	res.CleanedUp = time.Since(cleaning)
	r.checkInvariants()
	res.Violations, res.Writes, res.Unwritten, res.Notes, res.Took = r.errs, r.writes, r.unwritten, r.notes, time.Since(start)
	return res
}

// fail records a violation.
func (r *run) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// note records what a step did.
func (r *run) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// occupy resolves the step's target and, for a member fault, takes the member for it; ""
// when the step falls on nothing: the namespace runs nowhere yet, or the member is under
// another fault, of this schedule or of another running at once.
func (r *run) occupy(st Step) string {
	t := st.Target
	if t == Owner {
		if t = r.obs.runsOn(r.ns); t == "" {
			r.note("%s: skipped, the namespace runs on no one target", st)
			return ""
		}
	}
	if st.Kind != Cordon && !r.shared.occupy(t) {
		r.note("%s: skipped, %s is under another fault", st, t)
		return ""
	}
	r.note("%s: on %s", st, t)
	return t
}

// scheduleLabel marks a schedule's namespace, with the namespace's name as its value.
const scheduleLabel = "faults"

// place creates the namespace and places it on the Location.
func (r *run) place(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns, Labels: map[string]string{scheduleLabel: r.ns}}}
	placement := &schedulingv1alpha1.Placement{
		ObjectMeta: metav1.ObjectMeta{Name: r.ns},
		Spec: schedulingv1alpha1.PlacementSpec{
			LocationName:      r.location,
			NamespaceSelector: metav1.LabelSelector{MatchLabels: map[string]string{scheduleLabel: r.ns}},
		},
	}
	for _, obj := range []client.Object{ns, placement} {
		// Another schedule may be restarting the hub: retry as for any workload step.
		if err := r.retrying(func(ctx context.Context) error { return r.create(ctx, obj) })(ctx); err != nil {
			return err
		}
	}
	return nil
}

// event is one thing a lane does at its offset.
type event struct {
	at   time.Duration
	what string
	do   func(context.Context) error
}

// lanes splits the steps into lanes that run at once, each ordered by time: the workload's
// steps, which retry until the hub answers, so that a hub outage delays the workload alone;
// and one lane per fault, its start then its heal, so that a heal comes on time even while
// another fault's action waits. Actions on processes can wait for an API server: stopping a
// syncer that is still starting waits until its caches synced (controller-runtime's manager
// does not return before), which takes the hub that a restart of another fault holds down,
// and the members' lifecycle lock is held meanwhile. A lost primary's heal waits for the
// failover, which another fault may hold up until it heals.
func (r *run) lanes(steps []Step) [][]event {
	var workload []event
	var lanes [][]event
	for _, st := range steps {
		start, heal := r.actions(st)
		lane := []event{{at: st.At, what: st.String(), do: start}}
		if heal != nil {
			lane = append(lane, event{at: st.At + st.For, what: "heal " + st.String(), do: heal})
		}
		if st.workload() {
			workload = append(workload, lane...)
			continue
		}
		lanes = append(lanes, lane)
	}
	slices.SortStableFunc(workload, func(a, b event) int { return int(a.at - b.at) })
	return append(lanes, workload)
}

// play runs the lanes at once, each lane's events at their offsets from start, and returns
// once every lane ran.
func (r *run) play(ctx context.Context, start time.Time, lanes ...[]event) {
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Go(func() { r.playLane(ctx, start, lane) })
	}
	wg.Wait()
}

func (r *run) playLane(ctx context.Context, start time.Time, lane []event) {
	for _, e := range lane {
		if wait := time.Until(start.Add(e.at)); wait > 0 {
			time.Sleep(wait)
		}
		if err := e.do(ctx); err != nil {
			r.fail("%s: %v", e.what, err)
		}
	}
}

// actions returns what starts the step and what heals it (nil: nothing).
func (r *run) actions(st Step) (start, heal func(context.Context) error) {
	env := r.env
	switch st.Kind {
	case CreateClaim:
		return r.retrying(func(ctx context.Context) error {
			return r.create(ctx, r.claim(r.ns, st.Name, st.Mode))
		}), nil
	case CreateStatefulSet:
		return r.retrying(func(ctx context.Context) error { return r.create(ctx, r.statefulSet(st.Name, st.Replicas)) }), nil
	case Keep:
		return r.retrying(func(ctx context.Context) error { return r.keep(ctx, st.Name) }), nil
	case DeleteClaim:
		return r.retrying(func(ctx context.Context) error { return r.deleteClaim(ctx, st.Name) }), nil
	case Protect:
		return func(ctx context.Context) error { return r.protect(ctx, st) }, nil
	case LosePrimary:
		return r.losePrimary(st)
	case Cordon:
		var t string
		return func(ctx context.Context) error {
				if t = r.occupy(st); t == "" {
					return nil
				}
				return r.shared.hold("cordon "+t, func() error {
					return r.retrying(func(ctx context.Context) error { return r.cordon(ctx, t, true) })(ctx)
				})
			}, func(ctx context.Context) error {
				if t == "" {
					return nil
				}
				return r.shared.letGo("cordon "+t, func() error {
					return r.retrying(func(ctx context.Context) error { return r.cordon(ctx, t, false) })(ctx)
				})
			}
	case KillController:
		// A site lost and brought back while the controller was killed starts its replica
		// with it: the controller may run at every site already when the kill heals.
		return r.held(st.Kind, noContext(env.StopController), func(context.Context) error {
			var already *environment.StateError
			if err := env.StartController(); !errors.As(err, &already) {
				return err
			}
			return nil
		})
	case KillSyncer, StopMember, Partition:
		var t string
		return func(context.Context) error {
				if t = r.occupy(st); t == "" {
					return nil
				}
				if st.Kind == KillSyncer {
					return env.StopSyncer(t)
				}
				return env.StopMember(t, st.Kind == Partition)
			}, func(ctx context.Context) error {
				if t == "" {
					return nil
				}
				defer r.shared.free(t)
				if st.Kind == KillSyncer {
					return env.StartSyncer(t)
				}
				return env.StartMember(ctx, t)
			}
	case RestartHub:
		return r.held(st.Kind, noContext(env.Hub.StopAPIServer), env.Hub.StartAPIServer)
	case LoseHubSite:
		return r.held(st.Kind, func(context.Context) error {
			r.lostSite = st.Site
			return env.StopSite(st.Site)
		}, func(ctx context.Context) error { return env.StartSite(ctx, r.lostSite) })
	case SlowStorage:
		return r.degrade(st.Kind, func(s *simstorage.Storage) { s.SlowVolumes(st.Delay) }, func(s *simstorage.Storage) { s.SlowVolumes(0) })
	case FailStorage:
		return r.degrade(st.Kind, func(s *simstorage.Storage) { s.FailVolumes("the array answers with an error") }, func(s *simstorage.Storage) { s.FailVolumes("") })
	case SlowFencing:
		return r.degrade(st.Kind, func(s *simstorage.Storage) { s.SlowFencing(st.Delay) }, func(s *simstorage.Storage) { s.SlowFencing(0) })
	case FailFencing:
		return r.degrade(st.Kind, func(s *simstorage.Storage) { s.FailFencing("the array answers with an error") }, func(s *simstorage.Storage) { s.FailFencing("") })
	}
	return func(context.Context) error { return fmt.Errorf("unknown step kind %q", st.Kind) }, nil
}

// held makes a fault on a part of the bed that the schedules running at once share: the
// first to draw it starts it, the last whose fault heals heals it.
func (r *run) held(kind Kind, start, heal func(context.Context) error) (func(context.Context) error, func(context.Context) error) {
	key := string(kind)
	return func(ctx context.Context) error { return r.shared.hold(key, func() error { return start(ctx) }) },
		func(ctx context.Context) error { return r.shared.letGo(key, func() error { return heal(ctx) }) }
}

func noContext(f func() error) func(context.Context) error {
	return func(context.Context) error { return f() }
}

// degrade makes a fault of the storage domains the schedule runs on, shared with the
// schedules running there at once.
func (r *run) degrade(kind Kind, start, heal func(*simstorage.Storage)) (func(context.Context) error, func(context.Context) error) {
	key := string(kind)
	for _, s := range r.storages {
		key += " " + s.Name()
	}
	each := func(f func(*simstorage.Storage)) func() error {
		return func() error {
			for _, s := range r.storages {
				f(s)
			}
			return nil
		}
	}
	return func(context.Context) error { return r.shared.hold(key, each(start)) },
		func(context.Context) error { return r.shared.letGo(key, each(heal)) }
}

// retrying retries f until it succeeds or retryFor passed, as a user retries against a hub
// that does not answer.
func (r *run) retrying(f func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		return await(ctx, "the hub to take it", retryFor, f)
	}
}

// read gets obj from the hub, retrying for as long as a workload step would: another
// schedule may be restarting the hub.
func (r *run) read(ctx context.Context, key client.ObjectKey, obj client.Object) error {
	return await(ctx, fmt.Sprintf("%T %s", obj, key), retryFor, func(ctx context.Context) error { return r.hub.Get(ctx, key, obj) })
}

// await polls done until it returns nil, and returns its last error once within passed.
func await(ctx context.Context, what string, within time.Duration, done func(context.Context) error) error {
	deadline := time.Now().Add(within)
	return awaitUntil(ctx, what, func() time.Time { return deadline }, done)
}

// settleBound is when the bed must have settled: Liveness after the later of healed (the
// schedule's last heal, or the start of a wait of its clean-up) and the bed's last heal, as
// the faults of the schedules beside it keep the bed from settling, but never more than four
// times Liveness after healed.
func (r *run) settleBound(healed time.Time) func() time.Time {
	return func() time.Time {
		from := r.shared.quietSince()
		switch {
		case from.IsZero():
			from = time.Now() // another schedule's fault is in effect
		case from.Before(healed):
			from = healed
		}
		if bound, last := from.Add(Liveness), healed.Add(4*Liveness); bound.Before(last) {
			return bound
		}
		return healed.Add(4 * Liveness)
	}
}

// awaitUntil is await up to a deadline that may move.
func awaitUntil(ctx context.Context, what string, deadline func() time.Time, done func(context.Context) error) error {
	start := time.Now()
	// cause is the last answer that says what is missing: a last try that found an API server
	// restarted by another schedule says nothing of it.
	var cause error
	for {
		err := done(ctx)
		if err == nil {
			return nil
		}
		if !outOfReach(err) {
			cause = err
		}
		if time.Now().After(deadline()) {
			waited := time.Since(start).Round(time.Second)
			if cause != nil && cause != err {
				return fmt.Errorf("waited %s for %s: %w (at the last try: %v)", waited, what, cause, err)
			}
			return fmt.Errorf("waited %s for %s: %w", waited, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// outOfReach tells whether err says only that an API server did not answer: stopped,
// starting or stopping.
func outOfReach(err error) bool {
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err)
}

// create creates obj; one that exists (a retried create that landed) is fine.
func (r *run) create(ctx context.Context, obj client.Object) error {
	return client.IgnoreAlreadyExists(r.hub.Create(ctx, obj))
}

// keep makes the claim's hub PV Retain once the claim is bound. A claim already gone has
// nothing to keep.
func (r *run) keep(ctx context.Context, name string) error {
	c := &corev1.PersistentVolumeClaim{}
	if err := r.hub.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: name}, c); err != nil {
		return client.IgnoreNotFound(err)
	}
	if c.DeletionTimestamp != nil {
		return nil
	}
	if c.Spec.VolumeName == "" {
		return errors.New("the claim is not bound yet")
	}
	pv := &corev1.PersistentVolume{}
	if err := r.hub.Get(ctx, client.ObjectKey{Name: c.Spec.VolumeName}, pv); err != nil {
		return err
	}
	patch := client.MergeFrom(pv.DeepCopy())
	pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
	if err := r.hub.Patch(ctx, pv, patch); err != nil {
		return err
	}
	r.mu.Lock()
	if pv.Spec.CSI != nil {
		r.kept[pv.Spec.CSI.VolumeHandle] = pv.Name
	}
	r.mu.Unlock()
	return nil
}

// deleteClaim deletes the claim, noting first when its deletion was asked for.
func (r *run) deleteClaim(ctx context.Context, name string) error {
	r.mu.Lock()
	if _, ok := r.deleteAsked[name]; !ok {
		r.deleteAsked[name] = time.Now()
	}
	r.mu.Unlock()
	c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: r.ns, Name: name}}
	return client.IgnoreNotFound(r.hub.Delete(ctx, c))
}

func (r *run) cordon(ctx context.Context, target string, cordoned bool) error {
	return environment.Cordon(ctx, r.hub, target, cordoned)
}

// write writes to every volume of the namespace through every member that has it attached,
// as the workload's pods there would, until ctx ends.
func (r *run) write(ctx context.Context) {
	n := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(writePeriod):
		}
		handles := r.obs.handles(r.ns)
		if len(handles) == 0 {
			r.unwrite("no volume known")
		}
		for h, claim := range handles {
			v, storage := r.volume(h)
			if storage == nil || len(v.Holders) == 0 {
				r.unwrite("a volume attached nowhere")
				continue
			}
			for _, m := range v.Holders {
				n++
				record := fmt.Sprintf("%s#%d@%s", claim, n, m)
				if err := storage.Write(m, h, record); err != nil {
					r.unwrite("refused")
					continue
				}
				at := time.Now()
				r.mu.Lock()
				r.writes++
				r.acks[h] = append(r.acks[h], ack{record, at})
				r.mu.Unlock()
			}
		}
	}
}

// unwrite counts a try of the workload that wrote nothing, by reason.
func (r *run) unwrite(reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.unwritten == nil {
		r.unwritten = map[string]int{}
	}
	r.unwritten[reason]++
}

// claim is a claim of the schedule's: of the bed's Location's class, or in a pair
// schedule of each member's default class, as the two Locations' classes differ.
func (r *run) claim(ns, name string, mode corev1.PersistentVolumeAccessMode) *corev1.PersistentVolumeClaim {
	c := environment.Claim(ns, name, domain, mode)
	if r.s.paired() {
		c.Spec.StorageClassName = nil
	}
	return c
}

// statefulSet is a set whose pods each claim one ReadWriteOnce volume, "data".
func (r *run) statefulSet(name string, replicas int) *appsv1.StatefulSet {
	ns := r.ns
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			ServiceName: name,
			Replicas:    ptr.To(int32(replicas)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "db", Image: "registry.k8s.io/pause:3.10",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{*r.claim("", "data", corev1.ReadWriteOnce)},
		},
	}
}
