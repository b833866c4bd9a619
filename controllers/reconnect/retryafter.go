package reconnect

import (
	"net/http"
	"strconv"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	"k8s.io/client-go/rest"
)

// Config returns a copy of cfg whose clients wait at most MaxDelay before they retry a
// request that an API server refused because it is starting or stopping.
//
// An API server that starts accepts requests before it installed all its paths (the custom
// resources' last) and answers them 503 with Retry-After: 5; one that stops answers new
// requests 429 with Retry-After: 5. client-go sleeps those five seconds inside the request,
// so a process that asked a moment too early would catch up seconds after the server answers
// again. The waits that the server's flow control asks for (a 429 that names the flow schema
// it matched) stay as they are.
func Config(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return capRetryAfter{next: next} })
	return cfg
}

// capRetryAfter shortens to MaxDelay the Retry-After of answers from a starting or stopping
// server.
type capRetryAfter struct{ next http.RoundTripper }

func (c capRetryAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil || !startingOrStopping(resp) {
		return resp, err
	}
	if seconds, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && time.Duration(seconds)*time.Second > MaxDelay {
		resp.Header.Set("Retry-After", strconv.Itoa(int(MaxDelay/time.Second)))
	}
	return resp, nil
}

// startingOrStopping tells whether resp refused a request because the server is starting or
// stopping, rather than by its flow control.
func startingOrStopping(resp *http.Response) bool {
	switch resp.StatusCode {
	case http.StatusServiceUnavailable:
		return true
	case http.StatusTooManyRequests:
		return resp.Header.Get(flowcontrolv1.ResponseHeaderMatchedFlowSchemaUID) == ""
	}
	return false
}
