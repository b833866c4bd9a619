package coordination

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// fenceReader answers Gets of one Fence, or err.
type fenceReader struct {
	client.Reader
	fence *storagev1alpha1.Fence
	err   error
}

func (r fenceReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if r.err != nil {
		return r.err
	}
	if r.fence == nil || r.fence.Name != key.Name {
		return apierrors.NewNotFound(storagev1alpha1.GroupVersion.WithResource("fences").GroupResource(), key.Name)
	}
	r.fence.DeepCopyInto(obj.(*storagev1alpha1.Fence))
	return nil
}

func TestConfirmFenced(t *testing.T) {
	fence := func(state storagev1alpha1.FenceState, phase storagev1alpha1.FencePhase) *storagev1alpha1.Fence {
		return &storagev1alpha1.Fence{ObjectMeta: metav1.ObjectMeta{Name: "f"},
			Spec: storagev1alpha1.FenceSpec{State: state}, Status: storagev1alpha1.FenceStatus{Phase: phase}}
	}
	unreachable := errors.New("connection refused")
	for _, tt := range []struct {
		name    string
		r       fenceReader
		release bool
	}{
		{"holds", fenceReader{fence: fence(storagev1alpha1.Fenced, storagev1alpha1.FenceFenced)}, true},
		{"lifted since the cache saw it", fenceReader{fence: fence(storagev1alpha1.Unfenced, storagev1alpha1.FenceFenced)}, false},
		{"gone since the cache saw it", fenceReader{}, false},
		{"still fencing", fenceReader{fence: fence(storagev1alpha1.Fenced, storagev1alpha1.FenceFencing)}, false},
		{"the API server does not answer", fenceReader{err: unreachable}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := confirmFenced(context.Background(), tt.r, "f")
			if (err == nil) != tt.release {
				t.Fatalf("confirmFenced: %v; want a release: %t", err, tt.release)
			}
		})
	}
}
