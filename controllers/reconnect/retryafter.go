package reconnect

import (
	"net/http"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
)

// Config returns a copy of cfg whose clients wait at most MaxDelay before they retry a
// request that the server answered 503 Service Unavailable.
//
// An API server that starts again accepts requests before it installed all its paths (the
// custom resources' last) and answers them 503 with Retry-After: 5. client-go sleeps those
// five seconds inside the request, so a process that asked a moment too early would catch up
// seconds after the server is ready. Waits asked with 429 Too Many Requests are the server's
// flow control and stay as they are.
func Config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return capRetryAfter{next: next} })
	return cfg
}

// capRetryAfter shortens the Retry-After of 503 answers to MaxDelay.
type capRetryAfter struct{ next http.RoundTripper }

func (c capRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		return resp, err
	}
	if seconds, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && time.Duration(seconds)*time.Second > MaxDelay {
		resp.Header.Set("Retry-After", strconv.Itoa(int(MaxDelay/time.Second)))
	}
	return resp, nil
}
