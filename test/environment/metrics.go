package environment

import (
	"context"
)

// MetricsReader is the hub ServiceAccount, in custody-system, that the environment binds to
// the ClusterRole custody-metrics-reader of config/rbac: the identity to scrape the
// controller's metrics with, as Prometheus would.
const MetricsReader = "custody-metrics-reader"

// metricsReaderNamespace is MetricsReader's namespace, which config/default makes.
const metricsReaderNamespace = "custody-system"

// MetricsURL is where the controller serves its metrics, or "" when it does not.
func (e *Environment) MetricsURL() string {
	if e.opts.MetricsAddr == "" || e.opts.MetricsAddr == "0" {
		return ""
	}
	return "https://" + e.opts.MetricsAddr + "/metrics"
}

// MetricsToken returns a new token of MetricsReader.
func (e *Environment) MetricsToken(ctx context.Context) (string, error) {
	return e.Hub.ServiceAccountToken(ctx, metricsReaderNamespace, MetricsReader)
}

// bindMetricsReader makes MetricsReader and its binding when the controller serves metrics.
func (e *Environment) bindMetricsReader(ctx context.Context) error {
	if e.MetricsURL() == "" {
		return nil
	}
	return e.Hub.BindMetricsReader(ctx, metricsReaderNamespace, MetricsReader)
}
