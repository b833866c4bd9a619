package syncer

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/controllers/reconnect"
	"github.com/custody-dev/custody/controllers/syncer/credential"
)

// DefaultResources are the resource types a syncer syncs when Options name none.
var DefaultResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "namespaces"},
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "services"},
	{Version: "v1", Resource: "serviceaccounts"},
	{Version: "v1", Resource: "persistentvolumeclaims"},
	{Version: "v1", Resource: "persistentvolumes"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
	{Group: "batch", Version: "v1", Resource: "jobs"},
	{Version: "v1", Resource: "pods"},
	{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"},
}

// DefaultHeartbeatPeriod is how often the heartbeat Lease is renewed when Options say not.
const DefaultHeartbeatPeriod = 10 * time.Second

// Options configure a syncer.
type Options struct {
	// HubConfig and MemberConfig reach the hub and the member. A config without QPS is not
	// rate-limited by the client: the API servers' priority and fairness paces the syncer,
	// as it does controller-runtime's clients by default. client-go's own default (5 per
	// second) would make a failover of a thousand volumes take minutes.
	HubConfig, MemberConfig *rest.Config
	// HubServers are the URLs of every API server of the hub, for a hub served from several
	// sites: the syncer reaches whichever answers (reconnect.Servers), each with HubConfig's
	// credential and CA. Empty: HubConfig's host alone.
	HubServers []string
	// SyncTargetName names the SyncTarget the syncer serves; its target key is
	// ToSyncTargetKey of this name.
	SyncTargetName string
	// Resources are the resource types to sync; an empty version means the hub's preferred
	// one. Nil: DefaultResources. Namespaces are synced whenever a namespaced type is, and a
	// type that the hub or the member does not serve is skipped with a log line.
	Resources []schema.GroupVersionResource
	// HeartbeatPeriod is how often the heartbeat Lease is renewed. Zero:
	// DefaultHeartbeatPeriod.
	HeartbeatPeriod time.Duration
	// MetricsAddr, ProbeAddr and PprofAddr are where the metrics, health probe and pprof
	// endpoints listen. Empty or "0": not served.
	MetricsAddr, ProbeAddr, PprofAddr string
	// The metrics are served over HTTPS, to the callers that the member authenticates and
	// allows to get /metrics (securemetrics), with the certificate in MetricsCertDir or a
	// self-signed one. InsecureMetrics serves them over plain HTTP to anyone instead: for a
	// syncer on a developer's machine only.
	MetricsCertDir  string
	InsecureMetrics bool
	// Credential renews the hub token that HubConfig carries before it expires (package
	// credential), and Run reaches the hub with its config. Nil: Run makes one when HubConfig
	// carries an expiring service account token, which keeps each new token in
	// HubKubeconfigSecret; any other credential is used as it is. A Renewer given here
	// outlives Run: a syncer run again starts from its newest token.
	Credential *credential.Renewer
	// HubKubeconfigSecret is the member Secret, the one the syncer's hub kubeconfig is
	// mounted from, under whose key "kubeconfig" Run keeps the kubeconfig of each new hub
	// token, and from which a syncer that starts takes the token when it expires later than
	// HubConfig's. Empty: none.
	HubKubeconfigSecret types.NamespacedName
}

// hubKubeconfigKey is the key of the kubeconfig in HubKubeconfigSecret, as config/member
// generates it.
const hubKubeconfigKey = "kubeconfig"

// hubCredential sets o.HubConfig to a config that carries the current token of o.Credential,
// or of a Renewer it makes, and returns the Renewer to run; nil when the hub credential is not
// one to renew.
func (o *Options) hubCredential(ctx context.Context) (*credential.Renewer, error) {
	log := ctrl.LoggerFrom(ctx)
	r := o.Credential
	if r == nil {
		co := credential.Options{}
		if o.HubKubeconfigSecret.Name != "" {
			member, err := client.New(o.MemberConfig, client.Options{})
			if err != nil {
				return nil, err
			}
			co.Store = credential.SecretStore{Client: member, Secret: o.HubKubeconfigSecret, Key: hubKubeconfigKey}
		}
		var err error
		if r, err = credential.New(o.HubConfig, co); err != nil {
			log.Info("The hub credential is used as it is, not renewed", "reason", err.Error())
			return nil, nil
		}
	}
	if err := r.Load(ctx); err != nil {
		log.Error(err, "Reading the kept hub credential")
	}
	o.HubConfig = clientConfig(r.Config())
	return r, nil
}

// complete checks the options and fills in the defaults.
func (o Options) complete() (Options, error) {
	if o.HubConfig == nil || o.MemberConfig == nil {
		return o, errors.New("the syncer needs a hub and a member config")
	}
	if o.SyncTargetName == "" {
		return o, errors.New("the syncer needs the name of its SyncTarget")
	}
	if o.Resources == nil {
		o.Resources = DefaultResources
	}
	if o.HeartbeatPeriod <= 0 {
		o.HeartbeatPeriod = DefaultHeartbeatPeriod
	}
	o.HubConfig, o.MemberConfig = clientConfig(o.HubConfig), clientConfig(o.MemberConfig)
	for _, addr := range []*string{&o.MetricsAddr, &o.ProbeAddr, &o.PprofAddr} {
		if *addr == "" {
			*addr = "0"
		}
	}
	return o, nil
}

// clientConfig returns the config the syncer talks to a cluster with: no client-side rate limit
// unless one was set, and a short wait for a server that is starting (reconnect.Config).
func clientConfig(cfg *rest.Config) *rest.Config {
	cfg = reconnect.Config(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = -1
	}
	return cfg
}
