package securemetrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
)

// cluster answers reviews as an API server would: reader may get /metrics, stranger is
// authenticated and may not, any other token is unknown. It counts the reviews and fails
// them while down.
type cluster struct {
	tokenReviews, accessReviews int
	down                        bool
	asked                       authorizationv1.SubjectAccessReviewSpec
}

func (c *cluster) reviewer(now *time.Time) *reviewer {
	return &reviewer{
		authenticate: func(_ context.Context, tr *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error) {
			c.tokenReviews++
			if c.down {
				return nil, errors.New("connection refused")
			}
			switch tr.Spec.Token {
			case "reader", "stranger":
				tr.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{
					Username: "system:serviceaccount:monitoring:" + tr.Spec.Token, UID: "u-" + tr.Spec.Token,
					Groups: []string{"system:serviceaccounts"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}},
				}}
			}
			return tr, nil
		},
		authorize: func(_ context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
			c.accessReviews++
			c.asked = sar.Spec
			a := sar.Spec.NonResourceAttributes
			sar.Status.Allowed = sar.Spec.User == "system:serviceaccount:monitoring:reader" && a.Path == "/metrics" && a.Verb == "get"
			return sar, nil
		},
		now: func() time.Time { return *now },
	}
}

// scrape is the status of a request of path with token (none if empty) through r's filter.
func scrape(t *testing.T, r *reviewer, path, token string) int {
	t.Helper()
	if token != "" {
		token = "Bearer " + token
	}
	return scrapeWith(t, r, path, token)
}

// scrapeWith is the status of a request of path with the Authorization header (none if
// empty) through r's filter.
func scrapeWith(t *testing.T, r *reviewer, path, authorization string) int {
	t.Helper()
	h, err := r.filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "metrics")
	}))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if served := w.Body.String() == "metrics"; served != (w.Code == http.StatusOK) {
		t.Fatalf("status %d, body %q", w.Code, w.Body.String())
	}
	return w.Code
}

func TestFilterServesOnlyWhomTheClusterLetsGetThePath(t *testing.T) {
	now := time.Unix(0, 0)
	for _, tc := range []struct {
		name, path, token string
		want, reviews     int
	}{
		{"no token", "/metrics", "", http.StatusUnauthorized, 0},
		{"a token the cluster does not know", "/metrics", "forged", http.StatusUnauthorized, 1},
		{"an identity not allowed", "/metrics", "stranger", http.StatusForbidden, 2},
		{"the reader", "/metrics", "reader", http.StatusOK, 2},
		{"the reader, another path", "/debug", "reader", http.StatusForbidden, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &cluster{}
			if got := scrape(t, c.reviewer(&now), tc.path, tc.token); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
			if got := c.tokenReviews + c.accessReviews; got != tc.reviews {
				t.Errorf("%d reviews, want %d", got, tc.reviews)
			}
		})
	}
}

func TestFilterReadsTheBearerScheme(t *testing.T) {
	now := time.Unix(0, 0)
	for header, want := range map[string]int{
		"Bearer reader": http.StatusOK, "bearer reader": http.StatusOK, "Bearer  reader ": http.StatusOK,
		"Basic reader": http.StatusUnauthorized, "Bearer": http.StatusUnauthorized, "Bearer reader extra": http.StatusUnauthorized,
	} {
		if got := scrapeWith(t, (&cluster{}).reviewer(&now), "/metrics", header); got != want {
			t.Errorf("Authorization %q: status %d, want %d", header, got, want)
		}
	}
}

func TestFilterAsksAboutTheUserTheTokenIs(t *testing.T) {
	now := time.Unix(0, 0)
	c := &cluster{}
	scrape(t, c.reviewer(&now), "/metrics", "reader")
	a := c.asked
	if a.User != "system:serviceaccount:monitoring:reader" || a.UID != "u-reader" || len(a.Groups) != 1 ||
		len(a.Extra["k"]) != 1 || a.NonResourceAttributes == nil || *a.NonResourceAttributes != (authorizationv1.NonResourceAttributes{Path: "/metrics", Verb: "get"}) {
		t.Errorf("asked %+v", a)
	}
}

func TestFilterKeepsVerdictsForAWhile(t *testing.T) {
	now := time.Unix(0, 0)
	c := &cluster{}
	r := c.reviewer(&now)
	scrape(t, r, "/metrics", "reader")
	scrape(t, r, "/metrics", "stranger")
	now = now.Add(refusedFor - time.Second)
	if scrape(t, r, "/metrics", "reader") != http.StatusOK || scrape(t, r, "/metrics", "stranger") != http.StatusForbidden ||
		c.tokenReviews != 2 {
		t.Fatalf("%d token reviews within the verdicts' time, want the first 2", c.tokenReviews)
	}
	now = now.Add(time.Second)
	scrape(t, r, "/metrics", "reader")
	scrape(t, r, "/metrics", "stranger")
	if c.tokenReviews != 3 {
		t.Errorf("%d token reviews once the refusal expired, want 3: the refused one asked again", c.tokenReviews)
	}
	now = now.Add(allowedFor)
	scrape(t, r, "/metrics", "reader")
	if c.tokenReviews != 4 {
		t.Errorf("%d token reviews once the permission expired, want 4", c.tokenReviews)
	}
}

func TestFilterAnswersAFailedReviewWithAnErrorItDoesNotKeep(t *testing.T) {
	now := time.Unix(0, 0)
	c := &cluster{down: true}
	r := c.reviewer(&now)
	if got := scrape(t, r, "/metrics", "reader"); got != http.StatusInternalServerError {
		t.Errorf("status %d while the cluster is down, want 500", got)
	}
	c.down = false
	if got := scrape(t, r, "/metrics", "reader"); got != http.StatusOK {
		t.Errorf("status %d once the cluster is back, want 200", got)
	}
}

func TestFilterKeepsAtMostMaxVerdicts(t *testing.T) {
	now := time.Unix(0, 0)
	c := &cluster{}
	r := c.reviewer(&now)
	for i := range maxVerdicts + 10 {
		scrape(t, r, "/metrics", fmt.Sprintf("forged-%d", i))
	}
	if len(r.verdicts) != maxVerdicts {
		t.Fatalf("%d verdicts kept, want %d", len(r.verdicts), maxVerdicts)
	}
	now = now.Add(refusedFor)
	scrape(t, r, "/metrics", "reader")
	if len(r.verdicts) != 1 {
		t.Errorf("%d verdicts kept once the others expired, want the reader's alone", len(r.verdicts))
	}
}
