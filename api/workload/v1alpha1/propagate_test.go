package v1alpha1

import (
	"reflect"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPropagate(t *testing.T) {
	state, del := StateLabel, DeletionAnnotation
	m := func(kv ...string) map[string]string {
		out := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	const at, earlier = "2026-01-02T03:04:05Z", "2026-01-01T00:00:00Z"
	when, _ := time.Parse(time.RFC3339, at)
	now := when.Add(time.Hour)
	sync, pending := ResourceStateSync, ResourceStatePending
	type places = map[string]ResourceState
	type leaves = map[string]time.Time
	tests := []struct {
		name                 string
		nsL, nsA, objL, objA map[string]string
		coordinated          bool
		want                 Change
	}{
		{name: "namespace placed: object synced", nsL: m(state("a"), "Sync"), want: Change{Place: places{"a": sync}}},
		{name: "claims wait for coordination", nsL: m(state("a"), "Sync"), coordinated: true, want: Change{Place: places{"a": pending}}},
		{name: "already labelled: coordination's value kept", nsL: m(state("a"), "Sync"), objL: m(state("a"), "Upsync"), coordinated: true},
		{name: "namespace leaving: object leaves", nsL: m(state("a"), "Sync"), nsA: m(del("a"), at), objL: m(state("a"), "Sync"), want: Change{Leave: leaves{"a": when}}},
		{name: "namespace leaving with no time: object leaves with none", nsL: m(state("a"), "Sync"), nsA: m(del("a"), "soon"), objL: m(state("a"), "Sync"), want: Change{Leave: leaves{"a": {}}}},
		{name: "object already leaving", nsL: m(state("a"), "Sync"), nsA: m(del("a"), at), objL: m(state("a"), "Sync"), objA: m(del("a"), earlier)},
		{name: "namespace leaving, object never there", nsL: m(state("a"), "Sync"), nsA: m(del("a"), at)},
		{name: "returning object loses the stale annotation", nsL: m(state("a"), "Sync"), objA: m(del("a"), earlier), want: Change{Place: places{"a": sync}, Return: []string{"a"}}},
		{name: "namespace gone from the target before the object left it", nsL: m(state("b"), "Sync"), objL: m(state("a"), "Sync", state("b"), "Sync"), want: Change{Leave: leaves{"a": now}}},
		{name: "namespace gone, object already leaving", objL: m(state("a"), "Sync"), objA: m(del("a"), earlier)},
		{name: "other labels ignored", nsL: m("app", "x")},
		{name: "two targets", nsL: m(state("a"), "Sync", state("b"), "Sync"), objL: m(state("a"), "Sync"), want: Change{Place: places{"b": sync}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := &metav1.ObjectMeta{Labels: tt.nsL, Annotations: tt.nsA}
			obj := &metav1.ObjectMeta{Labels: tt.objL, Annotations: tt.objA}
			got := Propagate(ns, obj, tt.coordinated, now)
			if tt.want.Place == nil {
				tt.want.Place = places{}
			}
			if tt.want.Leave == nil {
				tt.want.Leave = leaves{}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Propagate = %+v, want %+v", got, tt.want)
			}
			got.Apply(obj)
			if again := Propagate(ns, obj, tt.coordinated, now); !again.Empty() {
				t.Fatalf("not idempotent: after applying, still %+v", again)
			}
			for key := range got.Leave {
				if leaving, _ := RemovalRequested(obj, key); !leaving {
					t.Fatalf("after applying, the object does not leave %s", key)
				}
			}
			if slices.ContainsFunc(got.Return, func(key string) bool { l, _ := RemovalRequested(obj, key); return l }) {
				t.Fatalf("after applying, a returning object still leaves: %v", obj.Annotations)
			}
		})
	}
}
