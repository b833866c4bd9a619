package dr

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// DrillObservation is everything DecideDrill reads about one Drill.
type DrillObservation struct {
	Now time.Time
	// Status is the drill's status so far.
	Status schedulingv1alpha1.DrillStatus
	// Pair is the drill's pair's spec, parsed; PairFound says whether it exists, Active is
	// its active Location and Switching whether a failover or relocate of it is under way.
	Pair      Pair
	PairFound bool
	Active    string
	Switching bool
	// Before names another Drill of the pair, made before this one, that still exists.
	Before string
	// Namespaces are the pair's namespaces, and Taken the sandboxes of them that exist
	// and are not the drill's.
	Namespaces, Taken []string
	// Volumes and Unprotected are the claims of the pair's namespaces, as the pair reads
	// them (Observation).
	Volumes, Unprotected []Volume
	// Claims are the claims made in the sandboxes, by sandbox namespace/claim.
	Claims map[string]SandboxClaim
	// Workloads are the Deployments and StatefulSets of the sandboxes.
	Workloads []Workload
}

// SandboxClaim is a claim the drill made in a sandbox.
type SandboxClaim struct {
	// Restored: the claim is restored from a replica, not made empty; Bound: it is bound.
	Restored, Bound bool
}

// DrillDecision is what the drill controller writes for one Drill.
type DrillDecision struct {
	Status schedulingv1alpha1.DrillStatus
	// Sandbox: make the sandboxes (what of them is missing), with Restores.
	Sandbox bool
	// Restores are the restore-from annotations of the claims to make in the sandboxes, by
	// the pair's namespace/claim: <target>/<namespace>/<snapshot>, the replica in the
	// pair's namespace at Location that the claim is restored from, or empty for a claim
	// made empty; Classes the storage-class annotations to make them with, where the pair
	// maps the claim's class to another at the drill's Location.
	Restores map[string]string
	Classes  map[string]string
}

// SandboxOf is the name of the namespace a drill copies the pair's namespace ns into.
func SandboxOf(ns string) string {
	const suffix, max = "-drill", 63
	if len(ns) > max-len(suffix) {
		ns = strings.TrimRight(ns[:max-len(suffix)], "-")
	}
	return ns + suffix
}

// DecideDrill decides the next step of a Drill: it starts once its pair can be drilled,
// picking the latest ready replica of each volume at the Location the pair does not run in,
// and is Ready once every claim it made is bound and every workload of its sandboxes ready.
func DecideDrill(o DrillObservation) DrillDecision {
	d := DrillDecision{Status: *o.Status.DeepCopy()}
	st := &d.Status
	if st.StartTime == nil {
		if reason, why := o.unstartable(); reason != "" {
			st.Phase = schedulingv1alpha1.DrillPending
			st.Conditions = []metav1.Condition{drillReady(reason, why)}
			return d
		}
		d.start(o)
	}
	if len(o.Taken) > 0 {
		st.Conditions = []metav1.Condition{drillReady(schedulingv1alpha1.ReasonNamespaceTaken,
			fmt.Sprintf("namespace %s exists and is no sandbox of this drill: delete or rename it, or end the drill", o.Taken[0]))}
		return d
	}
	d.Sandbox = true
	d.restores(o)
	d.progress(o)
	return d
}

// unstartable says why the drill cannot start yet: its pair is missing, drilled by an older
// Drill, switching or without an active Location, or a sandbox's namespace is taken.
func (o DrillObservation) unstartable() (reason, message string) {
	switch {
	case !o.PairFound:
		return schedulingv1alpha1.ReasonPairNotFound, "the LocationPair does not exist"
	case o.Before != "":
		return schedulingv1alpha1.ReasonDrillInProgress, fmt.Sprintf("Drill %s of the same pair runs: this one starts once it ended", o.Before)
	case o.Active == "" || o.Switching:
		return schedulingv1alpha1.ReasonPairSwitching, "the pair has no active Location yet or is switching: the drill starts once the switch completed"
	case len(o.Taken) > 0:
		return schedulingv1alpha1.ReasonNamespaceTaken, fmt.Sprintf("namespace %s exists and is no sandbox of this drill: delete or rename it", o.Taken[0])
	}
	return "", ""
}

// start records where and when the drill runs, and the sandboxes of the pair's namespaces.
func (d *DrillDecision) start(o DrillObservation) {
	st := &d.Status
	now := metav1.NewTime(o.Now)
	st.StartTime, st.Location = &now, Observation{Pair: o.Pair}.peer(o.Active)
	st.Steps = []schedulingv1alpha1.PairStep{{Progression: string(schedulingv1alpha1.DrillRestoring), Time: now}}
	st.Namespaces = nil
	for _, ns := range o.Namespaces {
		st.Namespaces = append(st.Namespaces, schedulingv1alpha1.DrillNamespace{Namespace: ns, Sandbox: SandboxOf(ns)})
	}
}

// restores picks, for each claim of the pair, the latest ready replica at the drill's
// Location, and counts the claims made empty; the first time, it records the oldest replica
// picked and the data window a failover then would have lost.
func (d *DrillDecision) restores(o DrillObservation) {
	st := &d.Status
	d.Restores, d.Classes = map[string]string{}, map[string]string{}
	var oldest time.Time
	st.Volumes, st.Unprotected = int32(len(o.Volumes)+len(o.Unprotected)), int32(len(o.Unprotected))
	for _, v := range o.Unprotected {
		d.Restores[v.Key()] = ""
	}
	for _, v := range o.Volumes {
		r := v.Replication
		if r == nil || r.Image == nil || !r.ImageReady || r.Destination == "" {
			d.Restores[v.Key()] = ""
			st.Unprotected++
			continue
		}
		d.Restores[v.Key()] = r.Image.Target + "/" + v.Namespace + "/" + r.Image.Snapshot
		if c := (Observation{Pair: o.Pair}).classAnnotation(v, st.Location); c != "" {
			d.Classes[v.Key()] = c
		}
		if oldest.IsZero() || r.Image.Time.Time.Before(oldest) {
			oldest = r.Image.Time.Time
		}
	}
	if st.OldestReplicaTime == nil && !oldest.IsZero() {
		st.OldestReplicaTime = &metav1.Time{Time: oldest}
		st.DataWindow = &metav1.Duration{Duration: st.StartTime.Sub(oldest)}
	}
}

// progress is where the drill stands: restoring until every claim it made is bound,
// starting until every workload of its sandboxes is ready, then Ready, its recovery time
// measured the first time.
func (d *DrillDecision) progress(o DrillObservation) {
	st := &d.Status
	st.Restored = 0
	bound := 0
	for _, c := range o.Claims {
		if c.Bound {
			bound++
			if c.Restored {
				st.Restored++
			}
		}
	}
	var unready []Workload
	for _, w := range o.Workloads {
		if w.Reported.IsZero() || w.Ready < w.Replicas {
			unready = append(unready, w)
		}
	}
	switch {
	case bound < len(d.Restores):
		d.step(o, schedulingv1alpha1.DrillRestoring)
		st.Conditions = []metav1.Condition{drillReady(schedulingv1alpha1.ReasonRestoring,
			fmt.Sprintf("%d of %d volumes restored in %s", bound, len(d.Restores), st.Location))}
	case len(unready) > 0:
		d.step(o, schedulingv1alpha1.DrillStarting)
		w := unready[0]
		st.Conditions = []metav1.Condition{drillReady(schedulingv1alpha1.ReasonStarting,
			fmt.Sprintf("%d workloads to be ready in %s, the first %s (%d of %d replicas ready)", len(unready), st.Location, w.Key(), w.Ready, w.Replicas))}
	default:
		d.step(o, schedulingv1alpha1.DrillReady)
		if st.ReadyTime == nil {
			now := metav1.NewTime(o.Now)
			st.ReadyTime, st.RecoveryTime = &now, &metav1.Duration{Duration: o.Now.Sub(st.StartTime.Time)}
		}
		c := drillReady(schedulingv1alpha1.ReasonDrillReady, fmt.Sprintf("every claim is bound and every workload ready in %s, %s after the start", st.Location, st.RecoveryTime.Round(time.Second)))
		c.Status = metav1.ConditionTrue
		st.Conditions = []metav1.Condition{c}
	}
}

// step moves the drill to phase p, recording when it first reached it.
func (d *DrillDecision) step(o DrillObservation, p schedulingv1alpha1.DrillPhase) {
	st := &d.Status
	if st.Phase == p {
		return
	}
	st.Phase = p
	for _, s := range st.Steps {
		if s.Progression == string(p) {
			return
		}
	}
	st.Steps = append(st.Steps, schedulingv1alpha1.PairStep{Progression: string(p), Time: metav1.NewTime(o.Now)})
}

// DrillEnding is the Ready condition of a drill that was ended, while n of its sandboxes
// are still being removed.
func DrillEnding(n int) metav1.Condition {
	return drillReady(schedulingv1alpha1.ReasonDrillEnding, fmt.Sprintf("the drill was ended: %d sandboxes are being removed, with the volumes restored into them", n))
}

// drillReady is the drill's Ready condition, False with reason and message.
func drillReady(reason, message string) metav1.Condition {
	return metav1.Condition{Type: schedulingv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: reason, Message: message}
}

// DrillRecord is the history entry of a drill of a pair that runs at from: once it is
// ready, what it measured; once it was ended before, that it was; nil while it runs.
func DrillRecord(st schedulingv1alpha1.DrillStatus, from string, ended bool) *schedulingv1alpha1.PairAction {
	if st.StartTime == nil || st.ReadyTime == nil && !ended {
		return nil
	}
	a := &schedulingv1alpha1.PairAction{
		Trigger: schedulingv1alpha1.TriggerDeclared, TriggerTime: st.StartTime.DeepCopy(), Mode: schedulingv1alpha1.DrillMode,
		From: from, To: st.Location, StartTime: *st.StartTime, Steps: st.Steps, OldestReplicaTime: st.OldestReplicaTime,
		Progression: schedulingv1alpha1.ProgressionCalledOff,
	}
	if st.ReadyTime == nil {
		return a
	}
	a.Progression, a.ProgressionTime, a.CompletionTime = schedulingv1alpha1.ProgressionCompleted, st.ReadyTime, st.ReadyTime
	a.Duration, a.RecoveryTime, a.RecoveryPoint = st.RecoveryTime, st.RecoveryTime, st.DataWindow
	a.Restored, a.Waiting = st.Restored, st.Unprotected
	return a
}
