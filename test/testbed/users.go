package testbed

import (
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// UserConfig returns a config for a new user of the cluster, authenticated by a client
// certificate, who has only what RBAC grants the user and its groups. Tests use it to run a
// component with exactly the permissions its manifests give it.
func (c *Cluster) UserConfig(name string, groups ...string) (*rest.Config, error) {
	u, err := c.env.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, err
	}
	return u.Config(), nil
}
