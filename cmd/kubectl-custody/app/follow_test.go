package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// pairReads is a reader of the hub whose reads of a pair return its states one after the
// other, the last one from then on.
type pairReads struct {
	client.Reader
	states []schedulingv1alpha1.LocationPairStatus
}

func (r *pairReads) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	p := obj.(*schedulingv1alpha1.LocationPair)
	p.Name, p.Status = key.Name, r.states[0]
	if len(r.states) > 1 {
		r.states = r.states[1:]
	}
	return nil
}

func TestFollowSwitch(t *testing.T) {
	poll := switchPoll
	switchPoll = 10 * time.Millisecond
	t.Cleanup(func() { switchPoll = poll })
	progressing := func(msg string) []metav1.Condition {
		return []metav1.Condition{{Type: schedulingv1alpha1.ConditionProgressing, Message: msg}}
	}
	action := func(generation int64, progression string) *schedulingv1alpha1.PairAction {
		return &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, From: "east", To: "west", Generation: generation,
			Trigger: schedulingv1alpha1.TriggerDeclared, Progression: progression,
			RecoveryTime: &metav1.Duration{Duration: 41 * time.Second}, RecoveryPoint: &metav1.Duration{Duration: time.Minute}, Restored: 2}
	}
	states := []schedulingv1alpha1.LocationPairStatus{
		// The last switch, before the one asked, is over: it is not the one followed.
		{LastAction: action(1, schedulingv1alpha1.ProgressionCompleted)},
		{LastAction: action(2, schedulingv1alpha1.ProgressionFencing), Conditions: progressing("fencing e1, e2")},
		{LastAction: action(2, schedulingv1alpha1.ProgressionFencing), Conditions: progressing("fencing e1, e2")},
		{LastAction: action(2, schedulingv1alpha1.ProgressionRestoring), Conditions: progressing("2 volumes to be restored and bound in west, the first ns/a")},
		{LastAction: action(2, schedulingv1alpha1.ProgressionCompleted)},
	}
	var out, errOut bytes.Buffer
	o := &options{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	if err := o.followSwitch(context.Background(), &pairReads{states: states}, "shop", 2, 0); err != nil {
		t.Fatal(err)
	}
	said := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	want := []string{"waiting for the hub to take the switch up", "Fencing: fencing e1, e2", "Restoring: 2 volumes to be restored and bound in west, the first ns/a"}
	if len(said) != len(want) {
		t.Fatalf("said %q, want %q", said, want)
	}
	for i := range want {
		if _, line, _ := strings.Cut(said[i], "] "); line != want[i] {
			t.Errorf("line %d: %q, want %q", i, said[i], want[i])
		}
	}
	if got := out.String(); got != "locationpair/shop: Failover from east to west (Declared) completed in 41s, losing at most 1m0s of writes; volumes restored 2, set aside 0, waiting for want of a replica 0\n" {
		t.Errorf("stdout %q", got)
	}

	errOut.Reset()
	err := o.followSwitch(context.Background(), &pairReads{states: states[1:2]}, "shop", 2, 50*time.Millisecond)
	if err == nil || err.Error() != "locationpair/shop: still Fencing: fencing e1, e2 after 50ms; kubectl custody history shop follows it" {
		t.Errorf("timed out: %v", err)
	}
}
