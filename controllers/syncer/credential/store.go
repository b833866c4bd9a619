package credential

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SecretStore keeps the kubeconfig under Key in the member Secret Secret: the one the
// syncer's Deployment mounts its hub kubeconfig from, which the member lets the syncer get
// and update, and nothing else of (config/syncer).
type SecretStore struct {
	Client client.Client
	Secret client.ObjectKey
	Key    string
}

// Load returns the kubeconfig in the Secret, or nil when there is none.
func (s SecretStore) Load(ctx context.Context) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := s.Client.Get(ctx, s.Secret, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading secret %s: %w", s.Secret, err)
	}
	return secret.Data[s.Key], nil
}

// Save writes kubeconfig into the Secret, creating it if it is missing (where the member
// lets the syncer).
func (s SecretStore) Save(ctx context.Context, kubeconfig []byte) error {
	secret := &corev1.Secret{}
	err := s.Client.Get(ctx, s.Secret, secret)
	if apierrors.IsNotFound(err) {
		secret.Namespace, secret.Name = s.Secret.Namespace, s.Secret.Name
		secret.Data = map[string][]byte{s.Key: kubeconfig}
		return s.Client.Create(ctx, secret)
	}
	if err != nil {
		return fmt.Errorf("reading secret %s: %w", s.Secret, err)
	}
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[s.Key] = kubeconfig
	if err := s.Client.Update(ctx, secret); err != nil {
		return fmt.Errorf("writing secret %s: %w", s.Secret, err)
	}
	return nil
}
