package reconnect

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// refusing answers its first request status with Retry-After: 5 and the given headers, as an
// API server that starts, stops or throttles does, and then an empty list.
func refusing(status int, headers map[string]string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			for k, v := range headers {
				w.Header().Set(k, v)
			}
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure"}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","items":[]}`))
	}))
	return srv, &calls
}

// list lists ConfigMaps through Config(cfg) and returns the Retry-After of every answer that
// client-go was given, in order.
func list(t *testing.T, cfg *rest.Config) []string {
	t.Helper()
	var seen []string
	cfg = Config(cfg)
	// Wrapped after Config's, this sees the answers as client-go gets them.
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil {
				seen = append(seen, resp.Header.Get("Retry-After"))
			}
			return resp, err
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{}); err != nil {
		t.Fatalf("list: %v", err)
	}
	return seen
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func TestConfigShortensTheWaitOfAStartingOrStoppingServer(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		srv, calls := refusing(status, nil)
		seen := list(t, &rest.Config{Host: srv.URL})
		srv.Close()
		if calls.Load() != 2 {
			t.Fatalf("%d: calls: %d, want the refusal and its retry", status, calls.Load())
		}
		if want := []string{"1", ""}; !slices.Equal(seen, want) {
			t.Fatalf("%d: client-go was told Retry-After %q, want %q: 1s instead of the 5s asked", status, seen, want)
		}
	}
}

func TestConfigKeepsTheWaitOfFlowControl(t *testing.T) {
	srv, _ := refusing(http.StatusTooManyRequests, map[string]string{flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID: "global-default"})
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
		t.Fatalf("Retry-After of flow control's 429: %q, want the 5 the server asked", got)
	}
}
