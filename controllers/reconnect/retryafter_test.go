package reconnect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// starting answers its first request as a starting API server does, 503 with Retry-After:
// status, and then an empty list.
func starting(status int) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure"}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","items":[]}`))
	}))
	return srv, &calls
}

// list lists ConfigMaps through cfg, wrapped or not, and returns how long it took.
func list(t *testing.T, cfg *rest.Config) time.Duration {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	return time.Since(start)
}

func TestConfigShortensTheRetryAfterOfAStartingServer(t *testing.T) {
	srv, calls := starting(http.StatusServiceUnavailable)
	defer srv.Close()
	took := list(t, Config(&rest.Config{Host: srv.URL}))
	if calls.Load() != 2 {
		t.Fatalf("calls: %d, want the 503 and its retry", calls.Load())
	}
	if took < MaxDelay || took > 3*MaxDelay {
		t.Fatalf("the retry came after %s, want about %s instead of the 5s asked", took, MaxDelay)
	}
}

func TestConfigKeepsTheRetryAfterOfFlowControl(t *testing.T) {
	srv, _ := starting(http.StatusTooManyRequests)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := capRetryAfter{next: http.DefaultTransport}.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Retry-After"); got != "5" {
		t.Fatalf("Retry-After of a 429: %q, want the 5 the server asked", got)
	}
}
