package versions

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// store is a reader of one ConfigMap at one version, or of none, counting its reads.
type store struct {
	rv    string // "" holds none
	reads int
}

func (s *store) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	s.reads++
	if s.rv == "" {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
	}
	cm := obj.(*corev1.ConfigMap)
	*cm = corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: s.rv, UID: "u"}}
	return nil
}

func (s *store) List(context.Context, client.ObjectList, ...client.ListOption) error { return nil }

func TestGoneIsReadPastTheCacheUntilTheCacheLetsGo(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	w := New()
	w.Wrote(key, "7")
	cache, live := &store{rv: "7x"}, &store{}
	for i, want := range []int{1, 2} { // the cache still holds it: read past it each time
		if err := Get(context.Background(), w, cache, live, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Fatalf("read %d: err %v, want NotFound", i, err)
		}
		if live.reads != want {
			t.Fatalf("read %d: %d reads past the cache, want %d", i, live.reads, want)
		}
	}
	cache.rv = "" // the cache lets go: nothing is remembered of the object any more
	if err := Get(context.Background(), w, cache, live, key, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) || live.reads != 2 {
		t.Fatalf("err %v, %d reads past the cache; want NotFound from the cache alone", err, live.reads)
	}
	if _, ok := w.m[key]; ok {
		t.Error("an object gone from the API server and the cache is still remembered")
	}
}

func TestGet(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "a"}
	for _, tt := range []struct {
		name             string
		written          string // "" for nothing written
		cache, live      string
		wantRV           string
		wantLive         bool
		wantNotFound     bool
		wantWrittenAfter string
	}{
		{name: "nothing written: the cache", cache: "5", live: "7", wantRV: "5"},
		{name: "the cache holds the version written", written: "7", cache: "7", live: "7", wantRV: "7"},
		{name: "the cache holds an older version: read past it", written: "7", cache: "5", live: "7", wantRV: "7", wantLive: true, wantWrittenAfter: "7"},
		{name: "the cache holds a newer version of another writer: read past it once", written: "7", cache: "9", live: "9", wantRV: "9", wantLive: true, wantWrittenAfter: "9"},
		{name: "the cache does not hold it yet", written: "7", live: "7", wantRV: "7", wantLive: true, wantWrittenAfter: "7"},
		{name: "gone: name only and NotFound", written: "7", cache: "7x", wantLive: true, wantNotFound: true},
		{name: "not found anywhere, nothing written", wantNotFound: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := New()
			if tt.written != "" {
				w.Wrote(key, tt.written)
			}
			cache, live := &store{rv: tt.cache}, &store{rv: tt.live}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
			err := Get(context.Background(), w, cache, live, key, cm)
			if apierrors.IsNotFound(err) != tt.wantNotFound || (err != nil && !apierrors.IsNotFound(err)) {
				t.Fatalf("err %v, want NotFound %t", err, tt.wantNotFound)
			}
			if cm.ResourceVersion != tt.wantRV || cm.Name != key.Name || cm.Namespace != key.Namespace {
				t.Errorf("read %s/%s at %q, want %s at %q", cm.Namespace, cm.Name, cm.ResourceVersion, key, tt.wantRV)
			}
			if tt.wantNotFound && cm.UID != "" {
				t.Errorf("an object not found kept the cached one's UID")
			}
			if (live.reads > 0) != tt.wantLive {
				t.Errorf("read past the cache %d times, want %t", live.reads, tt.wantLive)
			}
			if tt.wantLive && tt.wantWrittenAfter != "" && w.stale(key, tt.wantWrittenAfter) {
				t.Errorf("the version read past the cache was not remembered")
			}
		})
	}
}

func TestReplacedIsBehindUntilTheCacheHoldsAnotherVersion(t *testing.T) {
	req := types.NamespacedName{Namespace: "ns", Name: "claim"}
	claim, pv := req, types.NamespacedName{Name: "pv"}
	r := NewReplaced()
	r.Wrote(req, claim, "7", "7") // a write that changed nothing
	if r.Behind(req, claim, "7") {
		t.Fatal("behind after a write that left the version as it was")
	}
	r.Wrote(req, claim, "7", "9")
	r.Wrote(req, pv, "3", "10")
	for i := range 2 { // the cache still holds the versions the writes replaced
		if !r.Behind(req, claim, "7") || !r.Behind(req, pv, "3") {
			t.Fatalf("look %d: not behind while the cache holds the versions replaced", i)
		}
	}
	if r.Behind(req, claim, "11") { // the cache holds the write, or one after it
		t.Fatal("behind once the cache holds another version")
	}
	if r.Behind(req, claim, "7") {
		t.Error("behind again after the cache caught up")
	}
	if !r.Behind(req, pv, "3") {
		t.Error("the PV is no longer behind once the claim caught up")
	}
	if r.Behind(types.NamespacedName{Namespace: "ns", Name: "other"}, pv, "3") {
		t.Error("behind for a request that did not write the object")
	}
	r.Forget(req)
	if r.Behind(req, pv, "3") {
		t.Error("behind after the request was forgotten")
	}
	if len(r.m) != 0 {
		t.Errorf("%d requests still remembered, want none", len(r.m))
	}
}
