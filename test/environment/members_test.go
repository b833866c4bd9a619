package environment

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// TestStopsAndStartsMembers loses a member and gets it back, partitions the other and gets
// it back, and checks what each step stops, what the hub sees, the errors of steps that do
// not apply, and that the environment stops cleanly with one member lost and the other
// partitioned.
func TestStopsAndStartsMembers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	e, stop := startReady(ctx, t, OneLocation())

	lost := MemberStatus{Name: "m1", Location: "loc"}
	mustStop(t, e, "m1", false, lost)
	if err := e.Member("m1").Client.List(ctx, &corev1.NamespaceList{}); err == nil {
		t.Error("the API server of a stopped member answers")
	}
	waitReady(ctx, t, e, "m1", false)
	mustFail[*StateError](t, "stopping a stopped member", "m1 is stopped already", e.StopMember("m1", true))
	mustStart(ctx, t, e, "m1")
	mustFail[*StateError](t, "starting a running member", "m1 runs already", e.StartMember(ctx, "m1"))

	partitioned := MemberStatus{Name: "m2", Location: "loc", APIServer: true}
	mustStop(t, e, "m2", true, partitioned)
	if err := e.Member("m2").Client.List(ctx, &corev1.NamespaceList{}); err != nil {
		t.Errorf("the API server of a partitioned member: %v", err)
	}
	waitReady(ctx, t, e, "m2", false)
	mustFail[*StateError](t, "stopping a partitioned member", "m2 is partitioned already: start brings it back", e.StopMember("m2", false))
	mustStart(ctx, t, e, "m2")
	if err := e.StopMember("m3", false); !errors.Is(err, ErrNoMember) || err.Error() != `no such member "m3": the members are m1, m2` {
		t.Errorf("stopping an unknown member: %v", err)
	}

	mustStop(t, e, "m1", false, lost)
	if err := stop(); err != nil {
		t.Fatalf("stopping with a member down: %v", err)
	}
	if left := e.Processes(); len(left) > 0 {
		t.Fatalf("processes left after Stop: %v", left)
	}
}

// mustStop stops a member and checks its status against want.
func mustStop(t *testing.T, e *Environment, name string, partition bool, want MemberStatus) {
	t.Helper()
	if err := e.StopMember(name, partition); err != nil {
		t.Fatal(err)
	}
	if got, err := e.MemberStatus(name); err != nil || got != want {
		t.Fatalf("status of %s after the stop: %+v, %v; want %+v", name, got, err, want)
	}
}

// mustStart starts a member, and waits until the hub sees it Ready.
func mustStart(ctx context.Context, t *testing.T, e *Environment, name string) {
	t.Helper()
	if err := e.StartMember(ctx, name); err != nil {
		t.Fatal(err)
	}
	want := MemberStatus{Name: name, Location: "loc", APIServer: true, Syncer: true}
	if got, err := e.MemberStatus(name); err != nil || got != want {
		t.Fatalf("status of %s after the start: %+v, %v; want %+v", name, got, err, want)
	}
	waitReady(ctx, t, e, name, true)
}

// mustFail checks that err is an E with the message want.
func mustFail[E error](t *testing.T, what, want string, err error) {
	t.Helper()
	var target E
	if !errors.As(err, &target) || err.Error() != want {
		t.Errorf("%s: %v, want %q", what, err, want)
	}
}

// waitReady waits until the hub sees the named target Ready or not, as ready says.
func waitReady(ctx context.Context, t *testing.T, e *Environment, name string, ready bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		st := &workloadv1alpha1.SyncTarget{}
		if err := e.Hub.Client.Get(ctx, client.ObjectKey{Name: name}, st); err != nil {
			return false, err
		}
		return st.IsReady() == ready, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s to be Ready=%t: %v", name, ready, err)
	}
}

// TestRunnerStop: a goroutine stopped before it got going returns the cancellation, which is
// no error; any other error it returns is.
func TestRunnerStop(t *testing.T) {
	if err := run(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }).stop(); err != nil {
		t.Errorf("a cancelled runner: %v", err)
	}
	failed := errors.New("failed")
	if err := run(func(ctx context.Context) error { <-ctx.Done(); return failed }).stop(); !errors.Is(err, failed) {
		t.Errorf("a failing runner: got %v, want %v", err, failed)
	}
}
