package fencing

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// A Fence can wait on two things that only an operator can unblock: the storage, which has
// not confirmed it (Unconfirmed), and its target, which is back but has not reported clean
// (WaitingForClean). The fencing controller reports both as metrics, with the time the wait
// began, which the alerts of config/prometheus watch.

// Unconfirmed tells whether the Fence asks to cut its target off and the storage has not
// confirmed it yet, and since when: its request, whatever phases it went through since.
func Unconfirmed(f *storagev1alpha1.Fence) (time.Time, bool) {
	if f.Lifting() || f.Status.FencedTime != nil {
		return time.Time{}, false
	}
	if t := f.Status.RequestedTime; t != nil {
		return t.Time, true
	}
	return f.CreationTimestamp.Time, true
}

// WaitingForClean tells whether the Fence holds a target that answers again but has not
// reported clean since the latest of: its return, the storage confirming the Fence, and the
// unfence being asked (the reports FenceDecide lifts a Fence on), and since when. A target
// that is still away is not waited on: the Fence holds it as it should.
func WaitingForClean(f *storagev1alpha1.Fence, t TargetView) (time.Time, bool) {
	if !f.Holds() || !t.Found || !t.Ready {
		return time.Time{}, false
	}
	since := t.ReadySince
	for _, at := range []*metav1.Time{f.Status.FencedTime, f.Status.UnfenceRequestedTime} {
		if at != nil && at.After(since) {
			since = at.Time
		}
	}
	if t.Clean && t.Reported.After(since) {
		return time.Time{}, false
	}
	return since, true
}
