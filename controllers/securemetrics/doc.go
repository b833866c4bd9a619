// Package securemetrics configures the metrics endpoint of the controller's and the syncers'
// managers as kubebuilder scaffolds it: HTTPS, and only for callers that the manager's own
// cluster authenticates and allows to get the non-resource URL /metrics. The controller asks
// the hub; a syncer asks its member, where its metrics are scraped. config/ ships the
// ClusterRole custody-metrics-reader that grants the scrape, for the hub and for a member.
//
// The filter that asks is this package's own (authorized): a TokenReview and a
// SubjectAccessReview per scraper, their verdict kept for a minute (30 s if refused), as
// controller-runtime's filters.WithAuthenticationAndAuthorization asks through
// k8s.io/apiserver. That package's authentication stack (CEL, gRPC, OpenTelemetry) took a
// third of each binary, 30 MB of 79 MB for the syncer, and 13 MB of a syncer's resident
// set from its start, 11 MB of it the binary's pages.
package securemetrics
