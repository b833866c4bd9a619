package syncio

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// hubReader answers reads of the hub's identity: kube-system's UID, and the identity
// ConfigMap when kept is set, marked as being restored since restoring when that is set. It
// counts the reads of kube-system.
type hubReader struct {
	client.Reader
	system, kept, restoring string
	reads                   atomic.Int32
}

func (h *hubReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if h.kept == "" {
			return apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, key.Name)
		}
		o.Data = map[string]string{workloadv1alpha1.HubIdentityKey: h.kept}
		if h.restoring != "" {
			o.Annotations = map[string]string{workloadv1alpha1.HubRestoringAnnotation: h.restoring}
		}
	case *corev1.Namespace:
		h.reads.Add(1)
		o.UID = types.UID(h.system)
	}
	return nil
}

func TestHubCheck(t *testing.T) {
	for _, tc := range []struct {
		name, system, kept, restoring, want string
	}{
		{name: "the hub it started with", system: "a", want: ""},
		{name: "a restored hub keeps its identity", system: "b", kept: "a", want: ""},
		{name: "a wiped hub", system: "b", want: "the hub's identity is b, not a"},
		{name: "a restored hub of another", system: "a", kept: "c", want: "the hub's identity is c, not a"},
		{name: "a hub an import is restoring", system: "b", kept: "a", restoring: "2026-11-30T21:00:00Z",
			want: "an import has been restoring the hub's objects since 2026-11-30T21:00:00Z"},
		{name: "another hub an import is restoring", system: "b", kept: "c", restoring: "2026-11-30T21:00:00Z",
			want: "the hub's identity is c, not a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &HubCheck{Reader: &hubReader{system: tc.system, kept: tc.kept, restoring: tc.restoring}, Identity: "a"}
			err := h.Confirm(context.Background())
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Confirm() = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestHubCheckShares checks that callers at once share reads, each answered by one sent after
// it asked.
func TestHubCheckShares(t *testing.T) {
	r := &hubReader{system: "a"}
	h := &HubCheck{Reader: r, Identity: "a"}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			if err := h.Confirm(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := r.reads.Load(); n < 1 || n > 100 {
		t.Errorf("%d reads for 100 callers", n)
	}
	before := r.reads.Load()
	if err := h.Confirm(context.Background()); err != nil || r.reads.Load() != before+1 {
		t.Errorf("a caller after the others got %v after %d new reads, want its own read", err, r.reads.Load()-before)
	}
}
