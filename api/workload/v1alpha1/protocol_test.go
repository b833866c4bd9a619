package v1alpha1

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func obj(labels, annotations map[string]string, finalizers ...string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Labels: labels, Annotations: annotations, Finalizers: finalizers}
}

func TestPresenceOn(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		o      *metav1.ObjectMeta
		want   Presence
		wantOn bool
	}{
		{name: "no state label: not on the target", o: obj(map[string]string{"app": "x"}, nil)},
		{name: "empty state: placed, waiting", o: obj(map[string]string{StateLabel("a"): ""}, nil), wantOn: true},
		{name: "Sync", o: obj(map[string]string{StateLabel("a"): "Sync"}, nil), want: Presence{State: ResourceStateSync}, wantOn: true},
		{name: "Upsync", o: obj(map[string]string{StateLabel("a"): "Upsync"}, nil), want: Presence{State: ResourceStateUpsync}, wantOn: true},
		{name: "an unknown state reads as Pending", o: obj(map[string]string{StateLabel("a"): "sync"}, nil), wantOn: true},
		{name: "leaving with a time",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{DeletionAnnotation("a"): "2026-01-02T03:04:05Z"}),
			want: Presence{State: ResourceStateSync, Leaving: true, LeavingSince: at}, wantOn: true},
		{name: "leaving with an unparsable time: leaving, no time",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{DeletionAnnotation("a"): "yesterday"}),
			want: Presence{State: ResourceStateSync, Leaving: true}, wantOn: true},
		{name: "leaving with an empty value: leaving, no time",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{DeletionAnnotation("a"): ""}),
			want: Presence{State: ResourceStateSync, Leaving: true}, wantOn: true},
		{name: "another target's annotations do not count",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{DeletionAnnotation("b"): "2026-01-02T03:04:05Z", FinalizersAnnotation("b"): "x"}, SyncerFinalizer("b")),
			want: Presence{State: ResourceStateSync}, wantOn: true},
		{name: "finalizers, blanks and duplicates dropped",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{FinalizersAnnotation("a"): " x, ,y,x "}),
			want: Presence{State: ResourceStateSync, Finalizers: []string{"x", "y"}}, wantOn: true},
		{name: "an empty finalizer list holds nothing",
			o:    obj(map[string]string{StateLabel("a"): "Sync"}, map[string]string{FinalizersAnnotation("a"): " , "}),
			want: Presence{State: ResourceStateSync}, wantOn: true},
		{name: "the syncer finalizer",
			o:    obj(map[string]string{StateLabel("a"): "Upsync"}, nil, "other", SyncerFinalizer("a")),
			want: Presence{State: ResourceStateUpsync, Downstream: true}, wantOn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, on := PresenceOn(tt.o, "a")
			if on != tt.wantOn || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("PresenceOn = %+v, %v; want %+v, %v", got, on, tt.want, tt.wantOn)
			}
			if got.Held() != (len(tt.want.Finalizers) > 0) {
				t.Errorf("Held = %v with finalizers %v", got.Held(), got.Finalizers)
			}
		})
	}
}

func TestSyncedAndHeldBy(t *testing.T) {
	for s, want := range map[ResourceState]bool{ResourceStatePending: false, ResourceStateSync: true, ResourceStateUpsync: true} {
		if got := (Presence{State: s}).Synced(); got != want {
			t.Errorf("Synced(%q) = %v, want %v", s, got, want)
		}
	}
	p := Presence{Finalizers: []string{"x"}}
	if !p.HeldBy("x") || p.HeldBy("y") {
		t.Errorf("HeldBy: %+v", p)
	}
}

func TestTargets(t *testing.T) {
	o := obj(map[string]string{StateLabel("b"): "Sync", StateLabel("a"): "", StateLabel("c"): "Sync", "app": "x"},
		map[string]string{DeletionAnnotation("c"): "2026-01-02T03:04:05Z", DeletionAnnotation("d"): "2026-01-02T03:04:05Z"})
	if got, want := Targets(o), []string{"a", "b", "c"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Targets = %v, want %v", got, want)
	}
	if got, want := ActiveTargets(o), []string{"a", "b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ActiveTargets = %v, want %v", got, want)
	}
	if got, want := StaleRemovals(o), []string{"d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("StaleRemovals = %v, want %v", got, want)
	}
	if got := len(Presences(o)); got != 3 {
		t.Errorf("Presences has %d targets, want 3", got)
	}
}

func TestStatusReporter(t *testing.T) {
	tests := []struct {
		name        string
		labels      map[string]string
		annotations map[string]string
		want        string
	}{
		{name: "none synced", labels: map[string]string{StateLabel("a"): ""}, want: ""},
		{name: "the smallest key in Sync", labels: map[string]string{StateLabel("c"): "Sync", StateLabel("b"): "Sync"}, want: "b"},
		{name: "Upsync, Pending and unknown states do not report", labels: map[string]string{StateLabel("a"): "Upsync", StateLabel("b"): "", StateLabel("c"): "Foo", StateLabel("d"): "Sync"}, want: "d"},
		{name: "a target the object leaves does not report while another runs it",
			labels: map[string]string{StateLabel("a"): "Sync", StateLabel("b"): "Sync"}, annotations: map[string]string{DeletionAnnotation("a"): ""}, want: "b"},
		{name: "the last target, leaving, still reports",
			labels: map[string]string{StateLabel("a"): "Sync", StateLabel("b"): "Upsync"}, annotations: map[string]string{DeletionAnnotation("a"): ""}, want: "a"},
	}
	for _, tt := range tests {
		if got := StatusReporter(obj(tt.labels, tt.annotations)); got != tt.want {
			t.Errorf("%s: StatusReporter = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestWriters(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	o := obj(nil, nil)
	SetState(o, "a", ResourceStateSync)
	RequestRemoval(o, "a", at)
	if p, on := PresenceOn(o, "a"); !on || p.State != ResourceStateSync || !p.Leaving || !p.LeavingSince.Equal(at) {
		t.Fatalf("after SetState and RequestRemoval: %+v, %v", p, on)
	}
	if got := o.Annotations[DeletionAnnotation("a")]; got != "2026-01-02T02:04:05Z" {
		t.Errorf("removal written as %q, want UTC RFC 3339", got)
	}
	CancelRemoval(o, "a")
	if p, _ := PresenceOn(o, "a"); p.Leaving {
		t.Errorf("CancelRemoval left %+v", p)
	}
	if !SetHold(o, "a", "x", true) || SetHold(o, "a", "x", true) || !SetHold(o, "a", "y", true) {
		t.Fatalf("SetHold reported changes wrongly: %v", o.Annotations)
	}
	if got := o.Annotations[FinalizersAnnotation("a")]; got != "x,y" {
		t.Errorf("finalizers %q, want x,y", got)
	}
	SetHold(o, "a", "x", false)
	SetHold(o, "a", "y", false)
	if _, ok := o.Annotations[FinalizersAnnotation("a")]; ok {
		t.Errorf("the annotation stayed after the last finalizer: %v", o.Annotations)
	}
	RequestRemoval(o, "a", at)
	Release(o, "a")
	if _, on := PresenceOn(o, "a"); on || len(StaleRemovals(o)) > 0 {
		t.Errorf("after Release: labels %v annotations %v", o.Labels, o.Annotations)
	}
	Release(obj(nil, nil), "a") // nothing to release: no panic on nil maps
}

func TestIsProtocolKey(t *testing.T) {
	for k, want := range map[string]bool{
		StateLabel("a"): true, FinalizersAnnotation("a"): true, DeletionAnnotation("a"): true, PVNameAnnotation("a"): true,
		"app": false, SyncerFinalizer("a"): false, "workload.custody.dev/hub": false,
	} {
		if got := IsProtocolKey(k); got != want {
			t.Errorf("IsProtocolKey(%q) = %v, want %v", k, got, want)
		}
	}
	if !IsStateLabel(StateLabel("a")) || IsStateLabel(DeletionAnnotation("a")) {
		t.Error("IsStateLabel")
	}
}

func TestDrop(t *testing.T) {
	hold := "storage.custody.dev/hold"
	o := obj(map[string]string{StateLabel("m1"): "Sync", StateLabel("m2"): "Sync"},
		map[string]string{DeletionAnnotation("m1"): "2026-01-02T03:04:05Z", DeletionAnnotation("m2"): "2026-01-02T03:04:05Z",
			FinalizersAnnotation("m1"): hold + ",other", FinalizersAnnotation("m2"): hold},
		SyncerFinalizer("m1"), SyncerFinalizer("m2"), "kubernetes.io/pvc-protection")
	Drop(o, "m1")
	if _, on := PresenceOn(o, "m1"); on {
		t.Errorf("still on m1: %v", o.Labels)
	}
	for _, k := range []string{FinalizersAnnotation("m1"), DeletionAnnotation("m1")} {
		if _, ok := o.Annotations[k]; ok {
			t.Errorf("kept %s", k)
		}
	}
	if want := []string{SyncerFinalizer("m2"), "kubernetes.io/pvc-protection"}; !reflect.DeepEqual(o.Finalizers, want) {
		t.Errorf("finalizers %v, want %v", o.Finalizers, want)
	}
	if p, on := PresenceOn(o, "m2"); !on || !p.Leaving || !p.Downstream || !p.HeldBy(hold) {
		t.Errorf("m2's presence changed: %+v", p)
	}
	Drop(o, "m3")
	if _, on := PresenceOn(o, "m2"); !on || len(o.Finalizers) != 2 {
		t.Errorf("dropping a target the object is not on changed it: %+v", o)
	}
	left := obj(nil, map[string]string{FinalizersAnnotation("m1"): hold}, SyncerFinalizer("m1"), SyncerFinalizer("m1"))
	Drop(left, "m1")
	if len(left.Annotations) != 0 || len(left.Finalizers) != 0 {
		t.Errorf("an object without the state label kept its holds: %+v", left)
	}
}

func TestSyncerFinalizerKey(t *testing.T) {
	if key, ok := SyncerFinalizerKey(SyncerFinalizer("m1")); !ok || key != "m1" {
		t.Errorf("SyncerFinalizerKey(%q) = %q, %v", SyncerFinalizer("m1"), key, ok)
	}
	for _, f := range []string{"kubernetes.io/pvc-protection", "storage.custody.dev/volume", "workload.custody.dev/other"} {
		if _, ok := SyncerFinalizerKey(f); ok {
			t.Errorf("%s read as a syncer finalizer", f)
		}
	}
}
