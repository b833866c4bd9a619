package v1alpha1

import (
	"encoding/json"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// HeartbeatNamespace is the hub namespace of the heartbeat Leases. Each syncer renews the
// coordination.k8s.io Lease named after its SyncTarget there; its leaseDurationSeconds is
// the syncer's renewal period, rounded up to a second. The health controller turns the Lease
// into the SyncTarget's Ready condition.
//
// It is a namespace of its own, as Kubernetes keeps node Leases in kube-node-lease: in
// custody-system, where the controller's leader-election Lease lives, a SyncTarget named
// like that Lease would have its syncer renew the controller's lease. No Placement ever
// selects it.
const HeartbeatNamespace = "custody-heartbeats"

// CleanReportAnnotation, on a heartbeat Lease, holds the syncer's last clean report as JSON
// (CleanReport). As a node's Lease does, a heartbeat costs one Lease renewal: the syncer
// writes the SyncTarget's Clean conditions only when they change, and each renewal tells
// when the syncer last found them so.
const CleanReportAnnotation = "workload.custody.dev/clean-report"

// CleanReport is the syncer's last clean report: when it began, and the status of the Clean
// condition it found, per storage domain.
type CleanReport struct {
	Time  metav1.MicroTime                  `json:"time"`
	Clean map[string]metav1.ConditionStatus `json:"clean"`
}

// CleanReportOf is the clean report the Lease (nil: none) holds; false when it holds none.
func CleanReportOf(lease *coordinationv1.Lease) (CleanReport, bool) {
	var r CleanReport
	if lease == nil {
		return r, false
	}
	v, ok := lease.Annotations[CleanReportAnnotation]
	if !ok || json.Unmarshal([]byte(v), &r) != nil {
		return CleanReport{}, false
	}
	return r, true
}

// CleanReportedAt is when the syncer last reported the target's Clean conditions of the
// domains as its status shows them: the time of the report the Lease (nil: none) holds,
// zero when it holds none, or one that does not say what the status says for each domain
// (a status not yet seen, or gone by). A decision made on a clean status and this time is
// made on what the syncer found then. The time is cut to the second, as the hub's times it
// is held against (a condition's transition, a Fence's request) are: a report counts as
// made after one of them only when it began in a later second.
func (t *SyncTarget) CleanReportedAt(lease *coordinationv1.Lease, domains ...string) time.Time {
	r, ok := CleanReportOf(lease)
	if !ok {
		return time.Time{}
	}
	for _, d := range domains {
		c := meta.FindStatusCondition(t.Status.Conditions, CleanCondition(d))
		if s, reported := r.Clean[d]; !reported || c == nil || c.Status != s {
			return time.Time{}
		}
	}
	return r.Time.Truncate(time.Second)
}
