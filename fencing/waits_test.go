package fencing

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func TestUnconfirmed(t *testing.T) {
	requested := metav1.NewTime(time.Unix(1000, 0))
	made := metav1.NewTime(time.Unix(900, 0))
	for _, tt := range []struct {
		name  string
		fence func(*storagev1alpha1.Fence)
		since time.Time
		ok    bool
	}{
		{name: "asked for and executing: since its request", fence: func(f *storagev1alpha1.Fence) { f.Status.Phase = storagev1alpha1.FenceFencing }, since: requested.Time, ok: true},
		{name: "failed before it ever held: since its request", fence: func(f *storagev1alpha1.Fence) { f.Status.Phase = storagev1alpha1.FenceFailed }, since: requested.Time, ok: true},
		{name: "not yet decided: since it was made", fence: func(f *storagev1alpha1.Fence) { f.Status.RequestedTime = nil }, since: made.Time, ok: true},
		{name: "confirmed", fence: func(f *storagev1alpha1.Fence) {
			f.Status.Phase, f.Status.FencedTime = storagev1alpha1.FenceFenced, &requested
		}},
		{name: "failed after it held", fence: func(f *storagev1alpha1.Fence) {
			f.Status.Phase, f.Status.FencedTime = storagev1alpha1.FenceFailed, &requested
		}},
		{name: "asked to unfence", fence: func(f *storagev1alpha1.Fence) { f.Spec.State = storagev1alpha1.Unfenced }},
		{name: "deleted", fence: func(f *storagev1alpha1.Fence) { f.DeletionTimestamp = &requested }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: made},
				Spec:   storagev1alpha1.FenceSpec{State: storagev1alpha1.Fenced},
				Status: storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FencePending, RequestedTime: &requested}}
			tt.fence(f)
			since, ok := Unconfirmed(f)
			if ok != tt.ok || !since.Equal(tt.since) {
				t.Errorf("Unconfirmed = %v, %v; want %v, %v", since, ok, tt.since, tt.ok)
			}
		})
	}
}

func TestWaitingForClean(t *testing.T) {
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	fencedAt := metav1.NewTime(at(100))
	asked := metav1.NewTime(at(300))
	for _, tt := range []struct {
		name   string
		fence  func(*storagev1alpha1.Fence)
		target TargetView
		since  time.Time
		ok     bool
	}{
		{name: "target still away", target: TargetView{Found: true}},
		{name: "target gone", target: TargetView{}},
		{name: "back, no report since: since its return", target: TargetView{Found: true, Ready: true, ReadySince: at(200), Clean: true, Reported: at(150)},
			since: at(200), ok: true},
		{name: "back and reporting what it still holds", target: TargetView{Found: true, Ready: true, ReadySince: at(200), Reported: at(250)},
			since: at(200), ok: true},
		{name: "back and clean", target: TargetView{Found: true, Ready: true, ReadySince: at(200), Clean: true, Reported: at(250)}},
		{name: "answered throughout: since the Fence held", target: TargetView{Found: true, Ready: true, ReadySince: at(50), Reported: at(150)},
			since: at(100), ok: true},
		{name: "unfence asked after the last clean report: since it was asked", fence: func(f *storagev1alpha1.Fence) {
			f.Spec.State, f.Status.UnfenceRequestedTime = storagev1alpha1.Unfenced, &asked
		}, target: TargetView{Found: true, Ready: true, ReadySince: at(200), Clean: true, Reported: at(250)}, since: at(300), ok: true},
		{name: "never held", fence: func(f *storagev1alpha1.Fence) {
			f.Status.Phase, f.Status.FencedTime = storagev1alpha1.FenceFencing, nil
		}, target: TargetView{Found: true, Ready: true, ReadySince: at(200)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &storagev1alpha1.Fence{Spec: storagev1alpha1.FenceSpec{State: storagev1alpha1.Fenced},
				Status: storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFenced, FencedTime: &fencedAt}}
			if tt.fence != nil {
				tt.fence(f)
			}
			since, ok := WaitingForClean(f, tt.target)
			if ok != tt.ok || !since.Equal(tt.since) {
				t.Errorf("WaitingForClean = %v, %v; want %v, %v", since, ok, tt.since, tt.ok)
			}
		})
	}
}
