package faults

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Kind names what a step does.
type Kind string

// The workload's steps.
const (
	// CreateClaim creates the claim Name with access mode Mode.
	CreateClaim Kind = "create-claim"
	// CreateStatefulSet creates the StatefulSet Name with Replicas replicas and one
	// ReadWriteOnce claim template, "data".
	CreateStatefulSet Kind = "create-statefulset"
	// Cordon cordons Target, which moves the namespace away while it runs there, and
	// uncordons it after For.
	Cordon Kind = "cordon"
	// Keep sets the reclaim policy of the claim Name's hub PV to Retain: its storage must
	// outlive the claim.
	Keep Kind = "keep"
	// DeleteClaim deletes the claim Name.
	DeleteClaim Kind = "delete-claim"
	// Protect pairs the primary Location with the secondary, replicating every Interval and
	// failing over once the primary has been lost for Threshold, and waits until the pair
	// protects every claim. The steps after it count from then.
	Protect Kind = "protect"
)

// The faults; each heals after For.
const (
	// KillController cancels the controller's manager mid-flight and starts a new one.
	KillController Kind = "kill-controller"
	// KillSyncer cancels Target's syncer and starts a new one.
	KillSyncer Kind = "kill-syncer"
	// StopMember stops Target's API server and syncer; its nodes run on.
	StopMember Kind = "stop-member"
	// Partition stops Target's syncer while the member runs on: it and the hub no longer
	// hear of each other.
	Partition Kind = "partition"
	// RestartHub stops the hub's API server and starts it again.
	RestartHub Kind = "restart-hub"
	// LoseHubSite loses Site of a hub across sites, as a disaster of that site: its etcd
	// member, its API server and kube-controller-manager, and the controller replica beside
	// them, which holds the lead when it is the leader's. The other sites keep a quorum and
	// serve on; the site returns after For. It is drawn in RestartHub's place on such a hub.
	LoseHubSite Kind = "lose-hub-site"
	// SlowStorage delays every volume operation of the storage by Delay.
	SlowStorage Kind = "slow-storage"
	// FailStorage fails every volume operation of the storage.
	FailStorage Kind = "fail-storage"
	// SlowFencing delays every fencing operation by Delay.
	SlowFencing Kind = "slow-fencing"
	// FailFencing fails every fencing operation.
	FailFencing Kind = "fail-fencing"
	// LosePrimary stops every member of the pair's primary (with Partition, their syncers
	// alone), as a Location lost to a disaster; their nodes run on. It heals once the pair
	// failed over and For passed.
	LosePrimary Kind = "lose-primary"
)

// faultKinds are the faults Draw picks from, each as likely.
var faultKinds = []Kind{KillController, KillSyncer, StopMember, Partition, RestartHub, SlowStorage, FailStorage, SlowFencing, FailFencing}

// Owner, as a step's target, is the target the schedule's namespace runs on when the step
// starts, so that faults fall where the volumes are.
const Owner = "owner"

// Step is one thing a schedule does, At its offset from the schedule's start.
type Step struct {
	At   time.Duration
	Kind Kind
	// Target is a member, or Owner.
	Target   string
	Name     string
	Mode     corev1.PersistentVolumeAccessMode
	Replicas int
	Delay    time.Duration
	// Interval and Threshold are a pair's replication interval and failover threshold.
	Interval  string
	Threshold time.Duration
	// Partition: a lost primary's members run on without their syncers.
	Partition bool
	// Site is the hub site a LoseHubSite loses.
	Site string
	// For is how long a fault or a cordon lasts before it heals.
	For time.Duration
}

// workload tells whether the step is the workload's, not a fault.
func (s Step) workload() bool {
	switch s.Kind {
	case CreateClaim, CreateStatefulSet, Cordon, Keep, DeleteClaim, Protect:
		return true
	}
	return false
}

// heals tells whether the step is undone after For.
func (s Step) heals() bool { return s.For > 0 }

// resource is what the step occupies while it lasts: two steps on one resource never
// overlap, so that each heal undoes exactly its own step.
func (s Step) resource() string {
	switch s.Kind {
	case KillController:
		return "controller"
	case RestartHub, LoseHubSite:
		return "hub"
	case KillSyncer, StopMember, Partition:
		return "member " + s.Target
	case SlowStorage, FailStorage:
		return "storage"
	case SlowFencing, FailFencing:
		return "fencing"
	case Cordon:
		return "cordon " + s.Target
	case LosePrimary:
		return "primary"
	}
	return ""
}

func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "+%5.2fs %s", s.At.Seconds(), s.Kind)
	for _, part := range []string{s.Target, s.Site, s.Name, string(s.Mode)} {
		if part != "" {
			b.WriteString(" " + part)
		}
	}
	if s.Replicas > 0 {
		fmt.Fprintf(&b, " replicas=%d", s.Replicas)
	}
	if s.Delay > 0 {
		fmt.Fprintf(&b, " by %s", s.Delay)
	}
	if s.Interval != "" {
		fmt.Fprintf(&b, " every %s, failing over after %s", s.Interval, s.Threshold)
	}
	if s.Partition {
		b.WriteString(" partitioned")
	}
	if s.heals() {
		fmt.Fprintf(&b, " for %s", s.For)
	}
	return b.String()
}

// Schedule is what one seed draws: the steps, ordered by time.
type Schedule struct {
	Seed  uint64
	Steps []Step
}

func (s Schedule) String() string {
	lines := []string{fmt.Sprintf("schedule %d:", s.Seed)}
	for _, st := range s.Steps {
		lines = append(lines, "  "+st.String())
	}
	return strings.Join(lines, "\n")
}

// paired tells whether the schedule pairs the primary with the secondary and loses the
// primary: it runs there, alone among the pair schedules.
func (s Schedule) paired() bool {
	return slices.ContainsFunc(s.Steps, func(st Step) bool { return st.Kind == Protect })
}

// claims lists the names of the claims the schedule creates, in order.
func (s Schedule) claims() []string {
	var out []string
	for _, st := range s.Steps {
		if st.Kind == CreateClaim {
			out = append(out, st.Name)
		}
	}
	return out
}

// window is the time within which Draw starts the steps after the first claims.
const window = 2500 * time.Millisecond

// pairOdds: one schedule in pairOdds is a pair schedule.
const pairOdds = 20

// Draw draws the schedule of a seed: one to three claims (ReadWriteOnce three times in four)
// and at times a StatefulSet, then within the window one to three faults and up to two
// cordons, a kept PV and a deleted claim. One schedule in pairOdds runs in the pair's primary
// instead of the Location of the targets: it protects its claims with the pair first, and
// loses the primary within the window. On a hub across hubSites, a LoseHubSite of one of
// them is drawn where a RestartHub would be. The same seed, targets and sites always draw the
// same schedule, and a hub of one site the schedule it drew before sites were drawn.
func Draw(seed uint64, targets, hubSites []string) Schedule {
	r := rand.New(rand.NewPCG(seed, 0x637573746f6479)) //nolint:gosec // a test schedule, not a secret
	s := Schedule{Seed: seed}
	paired := r.IntN(pairOdds) == 0
	if paired {
		targets = pairTargets
	}
	claims := make([]string, 1+r.IntN(3))
	for i := range claims {
		claims[i] = fmt.Sprintf("c%d", i+1)
		mode := corev1.ReadWriteOnce
		if r.IntN(4) == 0 {
			mode = corev1.ReadWriteMany
		}
		s.Steps = append(s.Steps, Step{Kind: CreateClaim, Name: claims[i], Mode: mode})
	}
	if r.IntN(3) == 0 {
		s.Steps = append(s.Steps, Step{Kind: CreateStatefulSet, Name: "db", Replicas: 1 + r.IntN(2)})
	}
	at := func() time.Duration { return 200*time.Millisecond + time.Duration(r.Int64N(int64(window))) }
	lasting := func(min, max time.Duration) time.Duration {
		return (min + time.Duration(r.Int64N(int64(max-min)))).Round(10 * time.Millisecond)
	}
	var drawn []Step
	if paired {
		interval := "1d"
		if r.IntN(2) == 0 {
			interval = "1m" // a sync may fall within the schedule
		}
		// Well above the heartbeats' lapses when the bed's two cores are busiest, so that
		// only the primary lost on purpose fails over.
		s.Steps = append(s.Steps, Step{Kind: Protect, Interval: interval, Threshold: lasting(4*time.Second, 8*time.Second)})
		drawn = append(drawn, Step{At: at(), Kind: LosePrimary, Partition: r.IntN(2) == 0, For: lasting(300*time.Millisecond, 5*time.Second)})
	}
	for range 1 + r.IntN(3) {
		f := Step{At: at(), Kind: faultKinds[r.IntN(len(faultKinds))]}
		if f.Kind == RestartHub && len(hubSites) > 0 {
			f.Kind, f.Site = LoseHubSite, hubSites[r.IntN(len(hubSites))]
		}
		switch f.Kind {
		case KillSyncer, StopMember, Partition:
			// Twice in three times where the volumes are.
			f.Target = Owner
			if r.IntN(3) == 0 {
				f.Target = targets[r.IntN(len(targets))]
			}
		}
		switch f.Kind {
		case KillController, KillSyncer:
			f.For = lasting(10*time.Millisecond, 1500*time.Millisecond)
		case RestartHub:
			f.For = lasting(200*time.Millisecond, 2500*time.Millisecond)
		case LoseHubSite:
			// Past etcd's election timeout, and at times past the controller's Lease.
			f.For = lasting(3*time.Second, 20*time.Second)
		case StopMember, Partition:
			// Past the heartbeat grace and the fence delay half of the times.
			f.For = lasting(300*time.Millisecond, 4*time.Second)
		case SlowStorage, SlowFencing:
			f.Delay, f.For = lasting(50*time.Millisecond, 800*time.Millisecond), lasting(500*time.Millisecond, 3*time.Second)
		default:
			f.For = lasting(200*time.Millisecond, 2500*time.Millisecond)
		}
		drawn = append(drawn, f)
	}
	for range r.IntN(3) {
		switch r.IntN(3) {
		case 0:
			drawn = append(drawn, Step{At: at(), Kind: Cordon, Target: Owner, For: lasting(500*time.Millisecond, 3*time.Second)})
		case 1:
			drawn = append(drawn, Step{At: at(), Kind: Keep, Name: claims[r.IntN(len(claims))]})
		default:
			drawn = append(drawn, Step{At: at(), Kind: DeleteClaim, Name: claims[r.IntN(len(claims))]})
		}
	}
	s.Steps = append(s.Steps, apart(drawn)...)
	return s
}

// apart orders the steps by time and moves each step that would overlap an earlier one on
// the same resource to just after that one heals.
func apart(steps []Step) []Step {
	slices.SortStableFunc(steps, func(a, b Step) int { return int(a.At - b.At) })
	busy := map[string]time.Duration{}
	for i := range steps {
		res := steps[i].resource()
		if res == "" {
			continue
		}
		if free, ok := busy[res]; ok && steps[i].At < free {
			steps[i].At = free + 100*time.Millisecond
		}
		busy[res] = steps[i].At + steps[i].For
	}
	slices.SortStableFunc(steps, func(a, b Step) int { return int(a.At - b.At) })
	return steps
}
