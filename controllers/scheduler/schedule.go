package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Candidate is a SyncTarget as the scheduler weighs it for one namespace.
type Candidate struct {
	Name string
	Key  string
	// Usable: the namespace's Placement may use the target (see Usable).
	Usable bool
	Ready  bool
	// LostIn is, for a target that is not Ready, how long until it has been Unreachable for
	// its fence delay; zero once it has, or when it never answered. Until then it keeps its
	// namespaces: a heartbeat missed under load must not move every workload it runs.
	LostIn        time.Duration
	Unschedulable bool
	// Fenced: a Fence holds the target; it takes no namespace until the Fence is lifted.
	Fenced bool
	// Gone: the target is evicting or being deleted; every namespace leaves it.
	Gone     bool
	Priority int32
	Domains  []string
	// Load is the number of namespaces on the target, the one being scheduled excluded.
	Load int
	// Leaving: the namespace's removal from this target is under way.
	Leaving bool
	// Replicas: the target's member holds replicas a claim of the namespace is to be restored
	// from; of the eligible targets, it is chosen first.
	Replicas bool
}

// Request asks for the target of one namespace in one Location.
type Request struct {
	Candidates []Candidate
	// Current is the key of the target the namespace is on in the Location, "" if none.
	Current string
	// VolumeDomains are the storage domains of the namespace's existing network volumes.
	VolumeDomains []string
}

// Result is the scheduler's answer: the key of the chosen target, or why there is none.
type Result struct {
	Key     string
	Reason  string
	Message string
	// Recheck is when to choose again, because the answer changes with time alone (the
	// namespace stays on a target that is not Ready until it is lost); zero: never.
	Recheck time.Duration
}

// Schedule chooses the target of one namespace in one Location.
func Schedule(r Request) Result {
	// leaving is the best target that the namespace is leaving and that could take it
	// otherwise.
	best, leaving := -1, -1
	pick := func(at *int, i int) {
		if *at < 0 || better(r.Candidates[i], r.Candidates[*at]) {
			*at = i
		}
	}
	var rejected []string
	for i, c := range r.Candidates {
		reason := ineligible(c, r.VolumeDomains)
		if reason == "" && c.Leaving && !c.Replicas {
			// Only the target holding the replicas a claim is restored from takes the
			// namespace back while it leaves, when another can take it: a member that keeps
			// it for a replication's destination may never finish leaving.
			reason = "the namespace is still leaving it"
			pick(&leaving, i)
		}
		if reason != "" {
			rejected = append(rejected, c.Name+": "+reason)
			continue
		}
		pick(&best, i)
	}
	if best < 0 {
		// With nowhere else to go, a target the namespace is leaving takes it back: the
		// removal may wait for that very namespace to go elsewhere, as a volume that has no
		// other target to move to.
		best = leaving
	}
	if cur := slices.IndexFunc(r.Candidates, func(c Candidate) bool { return c.Key == r.Current }); r.Current != "" && cur >= 0 {
		c := r.Candidates[cur]
		stays := c.Usable && !c.Gone && reaches(c, r.VolumeDomains)
		// A target that is not Ready or cordoned keeps the namespace until another target
		// can take it: a removal would gain nothing, and undo the workloads where they may
		// run again. One that stopped answering keeps it until it is lost, as its owned
		// volumes do. Any target gives it up to the one that holds its replicas.
		toReplicas := best >= 0 && r.Candidates[best].Replicas && !c.Replicas
		eligible := (c.Ready || c.LostIn > 0) && !c.Unschedulable && !c.Fenced
		if stays && (eligible || best < 0) && !toReplicas {
			msg := "stays on " + c.Name
			switch {
			case !c.Ready && eligible:
				msg += fmt.Sprintf(", which is not Ready, until it has been unreachable for its fence delay (%s from now)", c.LostIn.Round(time.Second))
				return Result{Key: c.Key, Reason: schedulingv1alpha1.ReasonScheduled, Message: msg, Recheck: c.LostIn}
			case !c.Ready:
				msg += ", which is not Ready, until another target can take it"
			}
			return Result{Key: c.Key, Reason: schedulingv1alpha1.ReasonScheduled, Message: msg}
		}
	}
	if best < 0 {
		reason := schedulingv1alpha1.ReasonNoEligibleTarget
		if len(r.Candidates) > 0 && !slices.ContainsFunc(r.Candidates, func(c Candidate) bool { return c.Usable }) {
			reason = schedulingv1alpha1.ReasonTargetRestricted
		}
		msg := "the Location has no targets"
		if len(rejected) > 0 {
			msg = "no eligible target: " + strings.Join(rejected, "; ")
		}
		return Result{Reason: reason, Message: msg}
	}
	c := r.Candidates[best]
	return Result{Key: c.Key, Reason: schedulingv1alpha1.ReasonScheduled, Message: "placed on " + c.Name}
}

// ineligible says why a target cannot take the namespace, or "" when it can.
func ineligible(c Candidate, domains []string) string {
	switch {
	case !c.Usable:
		return "restricted or not named by the Placement"
	case c.Gone:
		return "evicting or deleted"
	case !c.Ready:
		return "not Ready"
	case c.Unschedulable && !c.Replicas:
		// A cordoned target that holds the replicas a claim is restored from still takes the
		// namespace: a LocationPair takes replicas on a cordoned target only when every
		// target of the Location that can take them is cordoned, and a switch restores a
		// volume where its replica is.
		return "cordoned"
	case c.Fenced:
		return "fenced off storage until its Fence is lifted"
	case !reaches(c, domains):
		return fmt.Sprintf("does not reach storage domains %v", domains)
	}
	return ""
}

func reaches(c Candidate, domains []string) bool {
	for _, d := range domains {
		if !slices.Contains(c.Domains, d) {
			return false
		}
	}
	return true
}

// Score is the target's priority divided by its load plus one.
func Score(c Candidate) float64 { return float64(c.Priority) / float64(c.Load+1) }

func better(a, b Candidate) bool {
	if a.Replicas != b.Replicas {
		return a.Replicas
	}
	if sa, sb := Score(a), Score(b); sa != sb {
		return sa > sb
	}
	return a.Name < b.Name
}

// Writes are the changes the scheduler makes to a namespace.
type Writes struct {
	// Add are the keys that get the Sync state label.
	Add []string
	// Remove are the keys whose removal is requested with the deletion annotation.
	Remove []string
	// Clear are the keys whose deletion annotation goes: it outlived the state label (the
	// removal is done, and the target can take the namespace again), or the target takes the
	// namespace back while it leaves.
	Clear []string
}

// Empty tells whether there is nothing to write.
func (w Writes) Empty() bool { return len(w.Add)+len(w.Remove)+len(w.Clear) == 0 }

// Plan turns the chosen target keys of a namespace into writes. A key chosen while the
// namespace leaves it (Schedule chooses one only for the replicas it holds) takes it back:
// its removal is cancelled.
func Plan(ns metav1.Object, desired []string) Writes {
	var w Writes
	current := workloadv1alpha1.ActiveTargets(ns)
	w.Clear = workloadv1alpha1.StaleRemovals(ns)
	for _, k := range desired {
		switch p, on := workloadv1alpha1.PresenceOn(ns, k); {
		case !on:
			w.Add = append(w.Add, k)
		case p.Leaving: // never a stale removal, which has no state label
			w.Clear = append(w.Clear, k)
		}
	}
	for _, k := range current {
		if !slices.Contains(desired, k) {
			w.Remove = append(w.Remove, k)
		}
	}
	sort.Strings(w.Add)
	sort.Strings(w.Clear)
	return w
}
