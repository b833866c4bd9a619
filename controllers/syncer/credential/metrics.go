package credential

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	renewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "custody_syncer_hub_credential_renewals_total",
		Help: "Renewals of the syncer's hub token, by result (success, failure).",
	}, []string{"result"})
	expiry = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "custody_syncer_hub_credential_expiry_timestamp_seconds",
		Help: "When the syncer's current hub token expires, in seconds since the epoch.",
	})
)

func init() {
	metrics.Registry.MustRegister(renewals, expiry)
}
