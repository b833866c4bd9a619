package app

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// fenceOf is a Fence of target in domain with status s.
func fenceOf(target, domain string, mode storagev1alpha1.FenceMode, state storagev1alpha1.FenceState, s storagev1alpha1.FenceStatus) storagev1alpha1.Fence {
	return storagev1alpha1.Fence{
		ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(target, domain)},
		Spec:       storagev1alpha1.FenceSpec{TargetName: target, Domain: domain, Mode: mode, State: state},
		Status:     s,
	}
}

func TestFenceTable(t *testing.T) {
	items := []storagev1alpha1.Fence{
		fenceOf("m1", "east", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FenceFenced, Executor: "m2", Reason: "Fenced", Message: "m1 is fenced off east by a NetworkFence in m2",
			RequestedTime: ago(3 * time.Hour), FencedTime: ago(2*time.Hour + 50*time.Minute),
		}),
		fenceOf("m1", "west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FencePending, Reason: "NoExecutor", Message: "no Ready target of storage domain west can execute the NetworkFence",
			RequestedTime: ago(3 * time.Hour),
		}),
		fenceOf("m3", "east", storagev1alpha1.Manual, storagev1alpha1.Unfenced, storagev1alpha1.FenceStatus{
			Phase: storagev1alpha1.FenceFenced, Reason: "WaitingForClean", RequestedTime: ago(50 * time.Hour), FencedTime: ago(50 * time.Hour),
		}),
		// Not yet seen by the fencing controller.
		fenceOf("m4", "east", storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}),
	}
	for _, tc := range []struct{ format, want string }{
		{"", "" +
			"TARGET   DOMAIN   MODE      STATE      PHASE     EXECUTOR   SINCE       REASON\n" +
			"m1       east     Network   Fenced     Fenced    m2         170m        Fenced\n" +
			"m1       west     Network   Fenced     Pending   <none>     3h          NoExecutor\n" +
			"m3       east     Manual    Unfenced   Fenced    <none>     2d2h        WaitingForClean\n" +
			"m4       east     Manual    Fenced     <none>    <none>     <unknown>   <none>\n"},
		{"wide", "" +
			"TARGET   DOMAIN   MODE      STATE      PHASE     EXECUTOR   SINCE       REASON            MESSAGE\n" +
			"m1       east     Network   Fenced     Fenced    m2         170m        Fenced            m1 is fenced off east by a NetworkFence in m2\n" +
			"m1       west     Network   Fenced     Pending   <none>     3h          NoExecutor        no Ready target of storage domain west can execute the NetworkFence\n" +
			"m3       east     Manual    Unfenced   Fenced    <none>     2d2h        WaitingForClean   <none>\n" +
			"m4       east     Manual    Fenced     <none>    <none>     <unknown>   <none>            <none>\n"},
	} {
		out, errOut := printed(t, tc.format, listing{table: fenceTable(items, now)})
		if out != tc.want || errOut != "" {
			t.Errorf("-o %q: stdout:\n%s\nwant:\n%s\nstderr: %q", tc.format, out, tc.want, errOut)
		}
	}
}

func TestSortFences(t *testing.T) {
	// As the hub lists them, by name.
	items := []storagev1alpha1.Fence{
		fenceOf("m1-a", "east", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}),
		fenceOf("m1", "a-west", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}),
		fenceOf("m1", "east", storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}),
	}
	sortFences(items)
	var got []string
	for _, f := range items {
		got = append(got, f.Name)
	}
	if want := []string{"m1.a-west", "m1.east", "m1-a.east"}; !slices.Equal(got, want) {
		t.Errorf("sorted %v, want %v", got, want)
	}
}
