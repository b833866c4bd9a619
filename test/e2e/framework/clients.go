package framework

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/controllers/syncer/transform"
	"github.com/custody-dev/custody/test/testbed"
)

// Client is a client of cfg's server that knows the bed's types.
func Client(cfg *rest.Config) client.Client {
	GinkgoHelper()
	c, err := client.New(cfg, client.Options{Scheme: testbed.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// ClientAs is a client of cfg's server that acts as user: it may do what RBAC grants user,
// and nothing else cfg's own identity may.
func ClientAs(cfg *rest.Config, user string) client.Client {
	GinkgoHelper()
	cfg = rest.CopyConfig(cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	return Client(cfg)
}

// CopyKey is the key of the hub object ns/name's copy in the member of the target key, on
// the hub of identity hubID (HubID).
func CopyKey(hubID, key, ns, name string) client.ObjectKey {
	return client.ObjectKey{Namespace: transform.Target{Key: key, Hub: hubID}.Namespace(ns), Name: name}
}
