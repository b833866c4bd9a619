package credential

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
)

// DefaultRenewAfter is the fraction of a token's lifetime after which it is renewed: half.
const DefaultRenewAfter = 0.5

// retry paces the renewals that fail, until one succeeds.
var retry = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Cap: time.Minute, Steps: 1 << 30}

// Store keeps the kubeconfig of the newest token, for a syncer that restarts.
type Store interface {
	// Load returns the kubeconfig kept, or nil when there is none.
	Load(ctx context.Context) ([]byte, error)
	// Save keeps kubeconfig.
	Save(ctx context.Context, kubeconfig []byte) error
}

// Options configure a Renewer.
type Options struct {
	// Store keeps the kubeconfig of each new token; nil keeps none.
	Store Store
	// RenewAfter is the fraction of a token's lifetime after which it is renewed. Zero:
	// DefaultRenewAfter.
	RenewAfter float64
}

// Renewer holds a syncer's hub token and renews it before it expires.
type Renewer struct {
	opts Options
	// base is the hub config without its token.
	base    *rest.Config
	current atomic.Pointer[Token]
	// now asks for a renewal at once.
	now chan struct{}
}

// New is a Renewer of the service account token that cfg carries, in BearerToken or
// BearerTokenFile. A config without one, or with a token that is not a service account's
// or does not expire, is refused: there is nothing to renew.
func New(cfg *rest.Config, o Options) (*Renewer, error) {
	raw := cfg.BearerToken
	if raw == "" && cfg.BearerTokenFile != "" {
		data, err := os.ReadFile(cfg.BearerTokenFile)
		if err != nil {
			return nil, err
		}
		raw = string(data)
	}
	if raw == "" {
		return nil, errors.New("the hub config carries no token")
	}
	t, err := Parse(raw)
	if err != nil {
		return nil, err
	}
	if !t.Expires() {
		return nil, fmt.Errorf("the token of serviceaccount %s/%s never expires", t.Namespace, t.Name)
	}
	if o.RenewAfter <= 0 || o.RenewAfter >= 1 {
		o.RenewAfter = DefaultRenewAfter
	}
	base := rest.CopyConfig(cfg)
	base.BearerToken, base.BearerTokenFile = "", ""
	r := &Renewer{opts: o, base: base, now: make(chan struct{}, 1)}
	r.current.Store(&t)
	return r, nil
}

// Token is the current token.
func (r *Renewer) Token() Token { return *r.current.Load() }

// Config is the hub config whose every request carries the current token.
func (r *Renewer) Config() *rest.Config {
	cfg := rest.CopyConfig(r.base)
	cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return bearer{r: r, next: next} })
	return cfg
}

// bearer sets the current token on every request.
type bearer struct {
	r    *Renewer
	next http.RoundTripper
}

func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.r.Token().Raw)
	return b.next.RoundTrip(req)
}

// RenewNow asks a running Renewer to renew the token at once.
func (r *Renewer) RenewNow() {
	select {
	case r.now <- struct{}{}:
	default:
	}
}

// Load takes the token of the kubeconfig kept in the Store when it is of the same
// ServiceAccount and expires later than the current one: a syncer that restarts starts from
// the newest token it had, not from the one in its mounted kubeconfig.
func (r *Renewer) Load(ctx context.Context) error {
	if r.opts.Store == nil {
		return nil
	}
	data, err := r.opts.Store.Load(ctx)
	if err != nil || data == nil {
		return err
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		return fmt.Errorf("reading the kept hub kubeconfig: %w", err)
	}
	kept, err := Parse(cfg.BearerToken)
	if err != nil {
		return fmt.Errorf("reading the kept hub kubeconfig: %w", err)
	}
	current := r.Token()
	if kept.SameAccount(current) && kept.Expiry.After(current.Expiry) {
		r.current.Store(&kept)
		ctrl.LoggerFrom(ctx).Info("Using the kept hub credential", "expires", kept.Expiry.UTC())
	}
	return nil
}

// NeedLeaderElection: the syncer elects no leader.
func (r *Renewer) NeedLeaderElection() bool { return false }

// Start renews the token whenever RenewAfter of its lifetime has passed, or at once when
// asked, until ctx is done. A renewal that fails is tried again with a backoff.
func (r *Renewer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("credential")
	expiry.Set(float64(r.Token().Expiry.Unix()))
	for {
		timer := time.NewTimer(time.Until(r.Token().RenewAt(r.opts.RenewAfter)))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C:
		case <-r.now:
			timer.Stop()
		}
		err := wait.ExponentialBackoffWithContext(ctx, retry, func(ctx context.Context) (bool, error) {
			if err := r.renew(ctx); err != nil {
				renewals.WithLabelValues("failure").Inc()
				log.Error(err, "Renewing the hub credential", "expires", r.Token().Expiry.UTC())
				return false, nil
			}
			return true, nil
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		t := r.Token()
		renewals.WithLabelValues("success").Inc()
		expiry.Set(float64(t.Expiry.Unix()))
		log.Info("Renewed the hub credential", "serviceAccount", t.Namespace+"/"+t.Name, "expires", t.Expiry.UTC())
		r.save(ctx)
	}
}

// renew requests a new token of the current token's ServiceAccount and lifetime, and uses it
// from then on.
func (r *Renewer) renew(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(r.Config())
	if err != nil {
		return err
	}
	t := r.Token()
	seconds := int64(t.NextLifetime() / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(t.Namespace).CreateToken(ctx, t.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("requesting a token of serviceaccount %s/%s: %w", t.Namespace, t.Name, err)
	}
	next, err := Parse(tr.Status.Token)
	if err != nil {
		return fmt.Errorf("the hub's new token: %w", err)
	}
	r.current.Store(&next)
	return nil
}

// save keeps the kubeconfig of the current token in the Store, saying so when it cannot:
// the token is in use all the same, and the next renewal saves again.
func (r *Renewer) save(ctx context.Context) {
	if r.opts.Store == nil {
		return
	}
	data, err := r.Kubeconfig()
	if err == nil {
		err = r.opts.Store.Save(ctx, data)
	}
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Keeping the renewed hub credential: a syncer that restarts starts from an older one")
	}
}

// Kubeconfig is a kubeconfig of the hub with the current token.
func (r *Renewer) Kubeconfig() ([]byte, error) {
	ca := r.base.CAData
	if len(ca) == 0 && r.base.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(r.base.CAFile); err != nil {
			return nil, err
		}
	}
	t := r.Token()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{
		Server: r.base.Host, CertificateAuthorityData: ca, TLSServerName: r.base.ServerName, InsecureSkipTLSVerify: r.base.Insecure,
	}
	user := t.Name
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: t.Raw}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: user}
	cfg.CurrentContext = "hub"
	return clientcmd.Write(*cfg)
}
