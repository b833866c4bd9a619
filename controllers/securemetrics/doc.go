// Package securemetrics configures the metrics endpoint of the controller's and the syncers'
// managers as kubebuilder scaffolds it: HTTPS, and only for callers that the manager's own
// cluster authenticates and allows to get the non-resource URL /metrics. The controller asks
// the hub; a syncer asks its member, where its metrics are scraped. config/ ships the
// ClusterRole custody-metrics-reader that grants the scrape, for the hub and for a member.
package securemetrics
