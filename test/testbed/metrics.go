package testbed

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MetricsReaderRole is the ClusterRole of config/ that may scrape Custody's metrics.
const MetricsReaderRole = "custody-metrics-reader"

// Scrape gets url, with token as its bearer token unless token is empty, and returns the
// status code and the body. It trusts any certificate: Custody's metrics endpoints serve a
// self-signed one unless given their own, and what the tests check is who may read them.
func Scrape(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// ServiceAccountToken makes the ServiceAccount ns/name unless it exists, and returns a new
// token of it, valid for an hour.
func (c *Cluster) ServiceAccountToken(ctx context.Context, ns, name string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := c.createIfMissing(ctx, sa); err != nil {
		return "", err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}
	if err := c.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", ns, name, err)
	}
	return req.Status.Token, nil
}

// BindMetricsReader makes the ServiceAccount ns/name and binds it to MetricsReaderRole, unless
// they exist: an identity that may scrape Custody's metrics, as Prometheus' may once bound as
// config/README.md says. The role must be on the cluster.
func (c *Cluster) BindMetricsReader(ctx context.Context, ns, name string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderRole + "-" + ns + "-" + name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}},
	}
	return c.createIfMissing(ctx, sa, binding)
}

// createIfMissing creates each object that does not exist yet.
func (c *Cluster) createIfMissing(ctx context.Context, objs ...client.Object) error {
	for _, o := range objs {
		if err := c.Client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}
