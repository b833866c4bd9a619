package app

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// syncTarget is a target with storage domains and the conditions given as type and status.
func syncTarget(name string, domains []string, conditions map[string]metav1.ConditionStatus) *workloadv1alpha1.SyncTarget {
	t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: workloadv1alpha1.SyncTargetSpec{StorageDomains: domains}}
	for typ, status := range conditions {
		t.Status.Conditions = append(t.Status.Conditions, metav1.Condition{Type: typ, Status: status})
	}
	return t
}

func TestPoweredOffRefusal(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    *workloadv1alpha1.SyncTarget
		want string
	}{
		{"unreachable", syncTarget("m1", []string{"east"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionFalse}), ""},
		{"never seen", syncTarget("m1", []string{"east"}, nil), ""},
		{"Ready", syncTarget("m1", []string{"east"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue}),
			`synctarget "m1" is Ready: its syncer still heartbeats, so its member is not powered off`},
		{"no domains", syncTarget("m1", nil, nil), `synctarget "m1" has no storage domains: there is no storage to cut it off`},
	} {
		err := poweredOffRefusal(tc.t)
		if got := errorText(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestFenceStep(t *testing.T) {
	held := storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFenced, Reason: "Fenced", FencedTime: ago(0)}
	failed := storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFailed, Reason: "NoNetworkFencing"}
	fence := func(mode storagev1alpha1.FenceMode, state storagev1alpha1.FenceState, s storagev1alpha1.FenceStatus) *storagev1alpha1.Fence {
		f := fenceOf("m1", "east", mode, state, s)
		return &f
	}
	deleted := fence(storagev1alpha1.Network, storagev1alpha1.Fenced, held)
	deleted.DeletionTimestamp = ago(0)
	for _, tc := range []struct {
		name    string
		f       *storagev1alpha1.Fence
		outcome outcome
		says    string
	}{
		{"no Fence", nil, toWrite, "created: m1 is cut off storage domain east as powered off"},
		{"a Manual Fence", fence(storagev1alpha1.Manual, storagev1alpha1.Fenced, held), unchanged,
			"unchanged: it already states that m1 is powered off (phase Fenced, Fenced)"},
		{"a Network Fence that holds", fence(storagev1alpha1.Network, storagev1alpha1.Fenced, held), unchanged,
			"left as it is: a Network Fence holds m1 off east (phase Fenced, Fenced)"},
		{"a Network Fence that failed", fence(storagev1alpha1.Network, storagev1alpha1.Fenced, failed), refused,
			"left as it is: it is a Network Fence (phase Failed, NoNetworkFencing) and its mode cannot change; kubectl delete fence m1.east lifts it first"},
		{"a Network Fence not yet seen", fence(storagev1alpha1.Network, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{}), refused,
			"left as it is: it is a Network Fence (phase <none>) and its mode cannot change; kubectl delete fence m1.east lifts it first"},
		{"a Manual Fence being unfenced", fence(storagev1alpha1.Manual, storagev1alpha1.Unfenced, held), refused,
			"left as it is: it is being lifted (phase Fenced, Fenced); run this again once it is gone"},
		{"a deleted Fence", deleted, refused, "left as it is: it is being lifted (phase Fenced, Fenced); run this again once it is gone"},
	} {
		s := fenceStep("m1", "east", tc.f)
		if s.outcome != tc.outcome || s.says != tc.says {
			t.Errorf("%s: %d %q, want %d %q", tc.name, s.outcome, s.says, tc.outcome, tc.says)
		}
		if tc.f != nil && s.fence != tc.f {
			t.Errorf("%s: the step is about %s, want the existing Fence", tc.name, s.fence.Name)
		}
	}
}

func TestFenceStepCreatesAManualFence(t *testing.T) {
	f := fenceStep("m1", "east", nil).fence
	want := storagev1alpha1.FenceSpec{TargetName: "m1", Domain: "east", State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Manual}
	if f.Name != "m1.east" || f.Spec != want {
		t.Errorf("creates %s %+v, want m1.east %+v", f.Name, f.Spec, want)
	}
}

func TestUnfenceStep(t *testing.T) {
	heldByPair := func(f *storagev1alpha1.Fence) *storagev1alpha1.Fence {
		f.Spec.HeldBy = storagev1alpha1.PairHolder("shop")
		return f
	}
	const stays = ": it stays fenced until its syncer is back and reports that it holds nothing it should not"
	fence := func(state storagev1alpha1.FenceState, s storagev1alpha1.FenceStatus) *storagev1alpha1.Fence {
		f := fenceOf("m1", "east", storagev1alpha1.Network, state, s)
		return &f
	}
	held := storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFenced, FencedTime: ago(0)}
	failedAfterHolding := storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFailed, FencedTime: ago(0)}
	lost := syncTarget("m1", []string{"east"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionFalse, "Clean-east": metav1.ConditionTrue})
	dirty := syncTarget("m1", []string{"east"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue, "Clean-east": metav1.ConditionFalse})
	cleanElsewhere := syncTarget("m1", []string{"east", "west"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue, "Clean-west": metav1.ConditionTrue})
	back := syncTarget("m1", []string{"east"}, map[string]metav1.ConditionStatus{"Ready": metav1.ConditionTrue, "Clean-east": metav1.ConditionTrue})
	for _, tc := range []struct {
		name    string
		f       *storagev1alpha1.Fence
		t       *workloadv1alpha1.SyncTarget
		outcome outcome
		says    string
	}{
		{"held, target lost", fence(storagev1alpha1.Fenced, held), lost, refused, "not unfenced: m1 is not Ready" + stays},
		{"held, target back but not clean", fence(storagev1alpha1.Fenced, held), dirty, refused, "not unfenced: m1 has not reported clean in east" + stays},
		{"held, target clean in another domain only", fence(storagev1alpha1.Fenced, held), cleanElsewhere, refused, "not unfenced: m1 has not reported clean in east" + stays},
		{"failed after holding, target lost", fence(storagev1alpha1.Fenced, failedAfterHolding), lost, refused, "not unfenced: m1 is not Ready" + stays},
		{"held, target back and clean", fence(storagev1alpha1.Fenced, held), back, toWrite, "unfenced: the hub lifts it"},
		{"held, target deleted", fence(storagev1alpha1.Fenced, held), nil, toWrite, "unfenced: the hub lifts it"},
		{"held by a pair, target back and clean", heldByPair(fence(storagev1alpha1.Fenced, held)), back, refused,
			"not unfenced: locationpair/shop holds it since its failover, and lets go once m1 reports clean"},
		{"held by a pair, target deleted", heldByPair(fence(storagev1alpha1.Fenced, held)), nil, toWrite, "unfenced: the hub lifts it"},
		{"pending, target lost", fence(storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FencePending}), lost, toWrite, "unfenced: the hub lifts it"},
		{"fencing, target lost", fence(storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFencing}), lost, toWrite, "unfenced: the hub lifts it"},
		{"failed before holding, target lost", fence(storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFailed, Reason: "NoNetworkFencing"}), lost, toWrite, "unfenced: the hub lifts it"},
		{"already unfenced", fence(storagev1alpha1.Unfenced, storagev1alpha1.FenceStatus{Phase: storagev1alpha1.FenceFenced, Reason: "WaitingForClean", FencedTime: ago(0)}), lost, unchanged,
			"already unfenced (phase Fenced, WaitingForClean)"},
	} {
		s := unfenceStep(tc.f, tc.t)
		if s.outcome != tc.outcome || s.says != tc.says || s.fence != tc.f {
			t.Errorf("%s: %d %q, want %d %q", tc.name, s.outcome, s.says, tc.outcome, tc.says)
		}
	}
}

func TestApply(t *testing.T) {
	fence := func(domain string) *storagev1alpha1.Fence {
		f := fenceOf("m1", domain, storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{})
		return &f
	}
	written := step{fence("a"), toWrite, "created: written"}
	unwritable := step{fence("b"), toWrite, "created: never printed"}
	kept := step{fence("c"), unchanged, "unchanged: kept"}
	stuck := step{fence("d"), refused, "left as it is: stuck"}
	// The hub refuses to write Fence m1.b.
	write := func(_ context.Context, f *storagev1alpha1.Fence) error {
		if f.Name == "m1.b" {
			return errors.New("fences.storage.custody.dev \"m1.b\" is forbidden:\nno")
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		suffix string
		steps  []step
		out    string
		err    string
	}{
		{"one written, one failed: done", "", []step{written, unwritable}, "fence/m1.a created: written\nfence/m1.b not created: fences.storage.custody.dev \"m1.b\" is forbidden: no\n", ""},
		{"a dry run marks the writes only", " (server dry run)", []step{kept, written, unwritable},
			"fence/m1.c unchanged: kept\nfence/m1.a created: written (server dry run)\nfence/m1.b not created: fences.storage.custody.dev \"m1.b\" is forbidden: no\n", ""},
		{"one written, one refused: done", "", []step{stuck, written}, "fence/m1.d left as it is: stuck\nfence/m1.a created: written\n", ""},
		{"nothing to do", "", []step{kept}, "fence/m1.c unchanged: kept\n", ""},
		{"nothing written, one failed", "", []step{kept, unwritable}, "fence/m1.c unchanged: kept\nfence/m1.b not created: fences.storage.custody.dev \"m1.b\" is forbidden: no\n", "no Fence of m1 was created"},
		{"nothing written, one refused", "", []step{stuck, kept}, "fence/m1.d left as it is: stuck\nfence/m1.c unchanged: kept\n", "no Fence of m1 was created"},
	} {
		var out bytes.Buffer
		o := &options{streams: genericiooptions.IOStreams{Out: &out}}
		err := o.apply(context.Background(), "m1", "created", tc.suffix, tc.steps, write)
		if out.String() != tc.out || errorText(err) != tc.err {
			t.Errorf("%s: printed\n%s, error %q; want\n%s, error %q", tc.name, out.String(), errorText(err), tc.out, tc.err)
		}
	}
}

func TestAskStepsNamesTheDomainsWritten(t *testing.T) {
	fence := func(domain string) *storagev1alpha1.Fence {
		f := fenceOf("m1", domain, storagev1alpha1.Manual, storagev1alpha1.Fenced, storagev1alpha1.FenceStatus{})
		return &f
	}
	question := func(domains string) string { return "Cut m1 off " + domains + "?" }
	for _, tc := range []struct {
		name  string
		steps []step
		asked string
	}{
		{"two written", []step{{fence("east"), toWrite, ""}, {fence("north"), refused, ""}, {fence("west"), toWrite, ""}},
			"Cut m1 off storage domains east, west? [y/N] "},
		{"one written", []step{{fence("east"), unchanged, ""}, {fence("west"), toWrite, ""}}, "Cut m1 off storage domain west? [y/N] "},
		{"none written: nothing asked", []step{{fence("east"), unchanged, ""}, {fence("west"), refused, ""}}, ""},
	} {
		var out bytes.Buffer
		o := &options{streams: genericiooptions.IOStreams{In: strings.NewReader("n\n"), Out: &out}}
		err := o.askSteps(askFlags{}, "m1", "created", tc.steps, question)
		want := "not confirmed: no Fence of m1 was created"
		if tc.asked == "" {
			want = ""
		}
		if out.String() != tc.asked || errorText(err) != want {
			t.Errorf("%s: asked %q, error %q; want %q, %q", tc.name, out.String(), errorText(err), tc.asked, want)
		}
	}
}
