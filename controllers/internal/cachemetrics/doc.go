// Package cachemetrics reports a controller's metrics from the objects of its cache at every
// scrape, instead of from state that its reconcilers keep: what a gauge says is then what
// the cache holds, also after a restart or a missed event, and a reconciler needs no code
// for its metrics. Each controller package gives a Collector the descriptors it reports and
// a function that lists what it needs and sends the metrics; Register adds it to
// controller-runtime's registry once and points it at the cache of the manager that starts.
package cachemetrics
