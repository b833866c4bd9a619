package securemetrics

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationclient "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// How long a verdict is kept, as controller-runtime's filter (k8s.io/apiserver's delegating
// authenticator and authorizer) keeps its reviews: a scraper that may read is asked again
// after a minute, one refused after 30 s; a failed review is not kept. At most maxVerdicts
// are kept, so that requests with made-up tokens cannot grow the memory.
const (
	allowedFor  = time.Minute
	refusedFor  = 30 * time.Second
	reviewFor   = 10 * time.Second
	maxVerdicts = 1024
)

// reviewer asks the cluster who a bearer token is (TokenReview) and whether its user may
// request a path with a verb (SubjectAccessReview), and keeps the verdicts for a while.
type reviewer struct {
	authenticate func(context.Context, *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error)
	authorize    func(context.Context, *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error)
	now          func() time.Time

	mu       sync.Mutex
	verdicts map[[sha256.Size]byte]verdict
}

// verdict is an answer to a request: the HTTP status to answer with (http.StatusOK: serve),
// until when it holds.
type verdict struct {
	code  int
	until time.Time
}

// authorized is the filter of a secure metrics endpoint: it serves a request only if the
// manager's cluster authenticates its bearer token and lets the token's user request the
// path with the request's method as verb (get for /metrics), as controller-runtime's
// filters.WithAuthenticationAndAuthorization does, without k8s.io/apiserver (doc.go).
func authorized(c *rest.Config, httpClient *http.Client) (metricsserver.Filter, error) {
	authn, err := authenticationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authorizationclient.NewForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	r := &reviewer{
		authenticate: func(ctx context.Context, tr *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error) {
			return authn.TokenReviews().Create(ctx, tr, metav1.CreateOptions{})
		},
		authorize: func(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
			return authz.SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		},
		now: time.Now,
	}
	return r.filter, nil
}

// filter serves handler's requests that the cluster lets through, and answers the others
// with 401 (no token, or one the cluster does not know), 403 (not allowed) or 500 (a review
// failed).
func (r *reviewer) filter(log logr.Logger, handler http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		code, err := r.review(req)
		switch {
		case err != nil:
			log.Error(err, "Reviewing a metrics request failed")
			http.Error(w, "Reviewing the request failed", http.StatusInternalServerError)
		case code != http.StatusOK:
			http.Error(w, http.StatusText(code), code)
		default:
			handler.ServeHTTP(w, req)
		}
	}), nil
}

// review is the HTTP status that req gets: http.StatusOK if it may be served.
func (r *reviewer) review(req *http.Request) (int, error) {
	// The scheme is case-insensitive (RFC 7235), as the API server reads it.
	parts := strings.Fields(req.Header.Get("Authorization"))
	if len(parts) != 2 || !strings.EqualFold(parts[0], "bearer") {
		return http.StatusUnauthorized, nil
	}
	token := parts[1]
	verb := strings.ToLower(req.Method)
	key := sha256.Sum256([]byte(verb + " " + req.URL.Path + " " + token))
	if code, ok := r.kept(key); ok {
		return code, nil
	}
	ctx, cancel := context.WithTimeout(req.Context(), reviewFor)
	defer cancel()
	code, err := r.ask(ctx, token, verb, req.URL.Path)
	if err == nil {
		r.keep(key, code)
	}
	return code, err
}

// ask reviews a token and its request of path with verb.
func (r *reviewer) ask(ctx context.Context, token, verb, path string) (int, error) {
	tr, err := r.authenticate(ctx, &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}})
	if err != nil {
		return 0, err
	}
	if !tr.Status.Authenticated {
		return http.StatusUnauthorized, nil
	}
	user := tr.Status.User
	extra := make(map[string]authorizationv1.ExtraValue, len(user.Extra))
	for k, v := range user.Extra {
		extra[k] = authorizationv1.ExtraValue(v)
	}
	sar, err := r.authorize(ctx, &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: user.Username, UID: user.UID, Groups: user.Groups, Extra: extra,
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: path, Verb: verb},
	}})
	if err != nil {
		return 0, err
	}
	if !sar.Status.Allowed || sar.Status.Denied {
		return http.StatusForbidden, nil
	}
	return http.StatusOK, nil
}

// kept is the verdict kept for key, if it still holds.
func (r *reviewer) kept(key [sha256.Size]byte) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.verdicts[key]
	if !ok || !r.now().Before(v.until) {
		return 0, false
	}
	return v.code, true
}

// keep keeps a verdict for key, first dropping those that no longer hold; with maxVerdicts
// kept that all hold, it keeps none.
func (r *reviewer) keep(key [sha256.Size]byte, code int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if r.verdicts == nil {
		r.verdicts = map[[sha256.Size]byte]verdict{}
	}
	if len(r.verdicts) >= maxVerdicts {
		for k, v := range r.verdicts {
			if !now.Before(v.until) {
				delete(r.verdicts, k)
			}
		}
		if len(r.verdicts) >= maxVerdicts {
			return
		}
	}
	d := refusedFor
	if code == http.StatusOK {
		d = allowedFor
	}
	r.verdicts[key] = verdict{code: code, until: now.Add(d)}
}
