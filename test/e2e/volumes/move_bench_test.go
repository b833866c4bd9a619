package volumes

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/environment"
)

// moves is how many times BenchmarkMove1OwnedVolume moves its volume.
const moves = 6

// BenchmarkMove1OwnedVolume binds one owned volume, then moves it between the two members of
// its Location six times, cordoning its owner and uncordoning the other, and reports the
// median and the longest time from the cordon to its claim's copy Bound on the new owner. The
// members' binders run with Kubernetes' default period (15 s), which a copy of the claim made
// before its PV's would wait for. Each move starts once the one before is over in both
// members. The goal: under 1 s.
func BenchmarkMove1OwnedVolume(b *testing.B) {
	ctx := context.Background()
	ctrl.SetLogger(logr.Discard())
	for b.Loop() {
		r := startRun(ctx, b, environment.OneLocation())
		c := r.Hub.Client
		ns := seedVolumes(ctx, b, c, 1)
		owner := waitOwners(ctx, b, r.cache, ns, 1, "", inUse)
		kubeSystem := &corev1.Namespace{}
		if err := c.Get(ctx, client.ObjectKey{Name: "kube-system"}, kubeSystem); err != nil {
			b.Fatal(err)
		}
		_, took := moveTimes(ctx, b, r, ns, owner, string(kubeSystem.UID), moves)
		r.stop(b)
		b.ReportMetric(took[len(took)/2].Seconds(), "cordon-to-bound-median-s")
		b.ReportMetric(took[len(took)-1].Seconds(), "cordon-to-bound-max-s")
		b.Logf("cordon to Bound on the new owner: %v", took)
	}
}

// moveTimes moves the one owned volume of the namespace ns n times between the members of
// OneLocation's Location, from owner on (moveOnce), and returns the member it ends on and the
// times of the moves, shortest first.
func moveTimes(ctx context.Context, b *testing.B, r *run, ns, owner, hub string, n int) (string, []time.Duration) {
	var took []time.Duration
	for range n {
		var d time.Duration
		owner, d = moveOnce(ctx, b, r, ns, owner, hub)
		took = append(took, d)
	}
	slices.Sort(took)
	return owner, took
}

// moveOnce moves the one owned volume of the namespace ns off owner, a member of
// OneLocation's Location, by cordoning owner, and returns the other member, where it moved,
// and the time from the cordon to its claim's copy Bound there. It returns once the move is
// over in both members, owner uncordoned; hub is the UID of the hub's kube-system.
func moveOnce(ctx context.Context, b *testing.B, r *run, ns, owner, hub string) (string, time.Duration) {
	c := r.Hub.Client
	to := environment.Other(owner)
	copyKey := client.ObjectKey{Namespace: transform.Target{Key: to, Hub: hub}.Namespace(ns), Name: "data-000"}
	start := time.Now()
	if err := environment.Cordon(ctx, c, owner, true); err != nil {
		b.Fatal(err)
	}
	bound := poll(b, "the claim bound on "+to, time.Minute, 10*time.Millisecond, func() bool {
		pvc := &corev1.PersistentVolumeClaim{}
		return r.Member(to).Client.Get(ctx, copyKey, pvc) == nil && pvc.Status.Phase == corev1.ClaimBound
	})
	waitOwners(ctx, b, r.cache, ns, 1, to, inUse)
	// The next move comes back here: this member takes work again, long before that move
	// starts (a scheduler that saw both members cordoned would try again later, which is no
	// part of a move), and that move starts once this member let go of everything, its
	// namespace copy gone, which its namespace controller takes seconds to finish.
	if err := environment.Cordon(ctx, c, owner, false); err != nil {
		b.Fatal(err)
	}
	left := transform.Target{Key: owner, Hub: hub}.Namespace(ns)
	poll(b, "the namespace copy gone from "+owner, time.Minute, 50*time.Millisecond, func() bool {
		return apierrors.IsNotFound(r.Member(owner).Client.Get(ctx, client.ObjectKey{Name: left}, &corev1.Namespace{}))
	})
	return to, bound.Sub(start)
}
