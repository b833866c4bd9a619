package syncer

import (
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/custody-dev/custody/controllers/reconnect"
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
	// MetricsAddr and ProbeAddr are where the metrics and health probe endpoints listen.
	// Empty or "0": not served.
	MetricsAddr, ProbeAddr string
	// The metrics are served over HTTPS, to the callers that the member authenticates and
	// allows to get /metrics (securemetrics), with the certificate in MetricsCertDir or a
	// self-signed one. InsecureMetrics serves them over plain HTTP to anyone instead: for a
	// syncer on a developer's machine only.
	MetricsCertDir  string
	InsecureMetrics bool
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
	for _, addr := range []*string{&o.MetricsAddr, &o.ProbeAddr} {
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
