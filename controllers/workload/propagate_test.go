package workload

import (
	"reflect"
	"testing"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func TestPropagate(t *testing.T) {
	state, del := workloadv1alpha1.StateLabel, workloadv1alpha1.DeletionAnnotation
	m := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name                     string
		nsL, nsA, objL, objA     map[string]string
		coordinated              bool
		wantLabels, wantAnnotate map[string]string
		wantDrop                 []string
	}{
		{name: "namespace placed: object synced", nsL: m(state("a"), "Sync"), wantLabels: m(state("a"), "Sync")},
		{name: "claims wait for coordination", nsL: m(state("a"), "Sync"), coordinated: true, wantLabels: m(state("a"), "")},
		{name: "already labelled: coordination's value kept", nsL: m(state("a"), "Sync"), objL: m(state("a"), "Upsync"), coordinated: true},
		{name: "namespace leaving: object leaves", nsL: m(state("a"), "Sync"), nsA: m(del("a"), "T"), objL: m(state("a"), "Sync"), wantAnnotate: m(del("a"), "T")},
		{name: "object already leaving", nsL: m(state("a"), "Sync"), nsA: m(del("a"), "T"), objL: m(state("a"), "Sync"), objA: m(del("a"), "S")},
		{name: "namespace leaving, object never there", nsL: m(state("a"), "Sync"), nsA: m(del("a"), "T")},
		{name: "returning object loses the stale annotation", nsL: m(state("a"), "Sync"), objA: m(del("a"), "S"), wantLabels: m(state("a"), "Sync"), wantDrop: []string{del("a")}},
		{name: "other labels ignored", nsL: m("app", "x")},
		{name: "two targets", nsL: m(state("a"), "Sync", state("b"), "Sync"), objL: m(state("a"), "Sync"), wantLabels: m(state("b"), "Sync")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Propagate(tt.nsL, tt.nsA, tt.objL, tt.objA, tt.coordinated)
			if tt.wantLabels == nil {
				tt.wantLabels = map[string]string{}
			}
			if tt.wantAnnotate == nil {
				tt.wantAnnotate = map[string]string{}
			}
			want := Change{Labels: tt.wantLabels, Annotations: tt.wantAnnotate, DropAnnotations: tt.wantDrop}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Propagate = %+v, want %+v", got, want)
			}
			labels, annotations := got.Apply(tt.objL, tt.objA)
			if again := Propagate(tt.nsL, tt.nsA, labels, annotations, tt.coordinated); !again.Empty() {
				t.Fatalf("not idempotent: after applying, still %+v", again)
			}
		})
	}
}
