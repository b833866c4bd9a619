package securemetrics

import (
	"crypto/tls"

	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// The reviews through which the metrics endpoint asks the manager's cluster who calls it and
// whether the caller may get /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options are the metrics server options of a manager that serves its metrics at addr ("0":
// not at all). Secure, the endpoint speaks HTTPS, with the certificate of certDir (tls.crt and
// tls.key, reloaded when they change) or, when certDir holds none, a self-signed one made at
// start, and answers only a bearer token that the manager's cluster authenticates
// (TokenReview) and authorizes to get /metrics (SubjectAccessReview). Not secure, it serves
// plain HTTP to anyone: for a process on a developer's machine only.
func Options(addr, certDir string, secure bool) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{
		BindAddress:    addr,
		SecureServing:  true,
		CertDir:        certDir,
		FilterProvider: authorized,
		TLSOpts:        []func(*tls.Config){http1Only},
	}
}

// http1Only turns HTTP/2 off, as kubebuilder's scaffold does: Go's HTTP/2 server was open to
// the rapid-reset and stream-cancellation attacks (CVE-2023-44487, CVE-2023-39325), and a
// scraper needs nothing of HTTP/2.
func http1Only(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }
