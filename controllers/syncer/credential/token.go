package credential

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MinLifetime is the shortest lifetime of a token that the API server gives.
const MinLifetime = 10 * time.Minute

// Token is a service account token and what its claims say.
type Token struct {
	// Raw is the token as the hub gave it.
	Raw string
	// Namespace and Name name the ServiceAccount the token is of; UID, when the token says,
	// is that ServiceAccount's.
	Namespace, Name, UID string
	// IssuedAt and Expiry bound its validity; Expiry is zero for a token that never expires.
	IssuedAt, Expiry time.Time
}

// claims are the claims of a service account token that Parse reads.
type claims struct {
	Subject    string `json:"sub"`
	Expiry     int64  `json:"exp"`
	IssuedAt   int64  `json:"iat"`
	Kubernetes *struct {
		Namespace      string `json:"namespace"`
		ServiceAccount struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"serviceaccount"`
	} `json:"kubernetes.io"`
}

// saPrefix starts the subject of a service account token.
const saPrefix = "system:serviceaccount:"

// Parse reads the claims of the service account token raw, without checking its signature.
func Parse(raw string) (Token, error) {
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return Token{}, errors.New("not a JSON web token")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return Token{}, fmt.Errorf("decoding the token's claims: %w", err)
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Token{}, fmt.Errorf("decoding the token's claims: %w", err)
	}
	t := Token{Raw: raw}
	if c.Kubernetes != nil {
		t.Namespace, t.Name, t.UID = c.Kubernetes.Namespace, c.Kubernetes.ServiceAccount.Name, c.Kubernetes.ServiceAccount.UID
	} else if rest, ok := strings.CutPrefix(c.Subject, saPrefix); ok {
		t.Namespace, t.Name, _ = strings.Cut(rest, ":")
	}
	if t.Namespace == "" || t.Name == "" {
		return Token{}, fmt.Errorf("not a service account token: subject %q", c.Subject)
	}
	if c.IssuedAt > 0 {
		t.IssuedAt = time.Unix(c.IssuedAt, 0)
	}
	if c.Expiry > 0 {
		t.Expiry = time.Unix(c.Expiry, 0)
	}
	return t, nil
}

// SameAccount tells whether t and o are tokens of the same ServiceAccount: the same name and,
// when both tokens say, the same UID, so that an account deleted and made again counts as
// another.
func (t Token) SameAccount(o Token) bool {
	return t.Namespace == o.Namespace && t.Name == o.Name && (t.UID == "" || o.UID == "" || t.UID == o.UID)
}

// Expires tells whether the token expires.
func (t Token) Expires() bool { return !t.Expiry.IsZero() }

// Lifetime is how long the token is valid from its issue; zero when it never expires.
func (t Token) Lifetime() time.Duration {
	if !t.Expires() || t.IssuedAt.IsZero() {
		return 0
	}
	return t.Expiry.Sub(t.IssuedAt)
}

// RenewAt is when a token is renewed that is renewed once the fraction renewAfter of its
// lifetime has passed; the zero time for a token that never expires. A token without an
// issue time counts its lifetime as MinLifetime.
func (t Token) RenewAt(renewAfter float64) time.Time {
	if !t.Expires() {
		return time.Time{}
	}
	lifetime := t.Lifetime()
	if lifetime <= 0 {
		lifetime = MinLifetime
	}
	return t.Expiry.Add(-time.Duration(float64(lifetime) * (1 - renewAfter)))
}

// NextLifetime is the lifetime to request of the token that renews t: t's own, rounded to
// the second, and at least MinLifetime.
func (t Token) NextLifetime() time.Duration {
	return max(t.Lifetime().Round(time.Second), MinLifetime)
}
