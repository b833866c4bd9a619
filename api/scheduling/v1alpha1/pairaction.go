package v1alpha1

import (
	"fmt"
	"time"
)

// Summary says in one line what the switch was and, once it ended, what it cost.
func (a *PairAction) Summary() string {
	head := fmt.Sprintf("%s from %s to %s", a.Mode, a.From, a.To)
	if a.Trigger != "" {
		head += " (" + a.Trigger + ")"
	}
	switch a.Progression {
	case ProgressionCompleted:
		out := head + " completed"
		if a.RecoveryTime != nil {
			out += fmt.Sprintf(" in %s", a.RecoveryTime.Round(time.Second))
		}
		switch {
		case a.RecoveryPoint != nil && a.Mode == DrillMode:
			out += fmt.Sprintf(", from replicas at most %s old", a.RecoveryPoint.Round(time.Second))
		case a.RecoveryPoint != nil:
			out += fmt.Sprintf(", losing at most %s of writes", a.RecoveryPoint.Round(time.Second))
		}
		return out + fmt.Sprintf("; volumes restored %d, set aside %d, waiting for want of a replica %d", a.Restored, a.SetAside, a.Waiting)
	case ProgressionCalledOff:
		if a.Mode == DrillMode {
			return head + " ended before it was ready"
		}
		return head + " called off: " + a.From + " answered again before it was fenced"
	}
	return head + " at " + a.Progression
}
