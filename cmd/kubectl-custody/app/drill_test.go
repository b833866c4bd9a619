package app

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
)

// drillReads is a reader of the hub whose reads of a drill return its states one after the
// other, the last one from then on; a nil state is a drill that is gone.
type drillReads struct {
	client.Reader
	states []*schedulingv1alpha1.DrillStatus
}

func (r *drillReads) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	st := r.states[0]
	if len(r.states) > 1 {
		r.states = r.states[1:]
	}
	if st == nil {
		return apierrors.NewNotFound(schema.GroupResource{Group: schedulingv1alpha1.GroupVersion.Group, Resource: "drills"}, key.Name)
	}
	d := obj.(*schedulingv1alpha1.Drill)
	d.Name, d.Spec.Pair, d.Status = key.Name, key.Name, *st
	return nil
}

func TestFollowDrillSaysHowFarItIsThenWhatItMeasured(t *testing.T) {
	poll := switchPoll
	switchPoll = 10 * time.Millisecond
	t.Cleanup(func() { switchPoll = poll })
	state := func(phase schedulingv1alpha1.DrillPhase, msg string) *schedulingv1alpha1.DrillStatus {
		return &schedulingv1alpha1.DrillStatus{Phase: phase, Location: "west", Volumes: 2, Restored: 1, Unprotected: 1,
			RecoveryTime: &metav1.Duration{Duration: 23 * time.Second}, DataWindow: &metav1.Duration{Duration: 2 * time.Minute},
			Namespaces: []schedulingv1alpha1.DrillNamespace{{Namespace: "shop", Sandbox: "shop-drill"}},
			Conditions: []metav1.Condition{{Type: schedulingv1alpha1.ConditionReady, Message: msg}}}
	}
	var out, errOut bytes.Buffer
	o := &options{streams: genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}}
	reads := &drillReads{states: []*schedulingv1alpha1.DrillStatus{
		{},
		state(schedulingv1alpha1.DrillRestoring, "0 of 2 volumes restored in west"),
		state(schedulingv1alpha1.DrillStarting, "1 workloads to be ready in west, the first shop-drill/Deployment/web (0 of 1 replicas ready)"),
		state(schedulingv1alpha1.DrillReady, "ready"),
	}}
	if err := o.followDrill(context.Background(), reads, "shop", false, 0); err != nil {
		t.Fatal(err)
	}
	said := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	want := []string{"waiting for the hub to take the drill up", "Restoring: 0 of 2 volumes restored in west",
		"Starting: 1 workloads to be ready in west, the first shop-drill/Deployment/web (0 of 1 replicas ready)"}
	if len(said) != len(want) {
		t.Fatalf("said %q, want %q", said, want)
	}
	for i := range want {
		if !strings.HasSuffix(said[i], want[i]) {
			t.Errorf("line %d: %q, want it to end in %q", i, said[i], want[i])
		}
	}
	if got, want := out.String(), "drill/shop: ready in west, RTO 23s, data window 2m0s; volumes restored 1 of 2 (1 made empty, having no replica); sandboxes: shop in shop-drill; kubectl custody drill shop --end ends it\n"; got != want {
		t.Errorf("out %q, want %q", got, want)
	}

	out.Reset()
	ending := state(schedulingv1alpha1.DrillEnding, "the drill was ended: 1 sandboxes are being removed, with the volumes restored into them")
	if err := o.followDrill(context.Background(), &drillReads{states: []*schedulingv1alpha1.DrillStatus{ending, nil}}, "shop", true, 0); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "drill/shop: ended: its sandboxes are gone, with the volumes restored into them\n" {
		t.Errorf("out %q", got)
	}
}
