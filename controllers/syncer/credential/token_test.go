package credential

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// jwt is an unsigned token with claims.
func jwt(claims map[string]any) string {
	payload, _ := json.Marshal(claims)
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(payload) + ".c2lnbmF0dXJl"
}

var (
	issued  = time.Unix(1_800_000_000, 0)
	expires = issued.Add(time.Hour)
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want Token
		err  string
	}{
		{
			name: "a bound token",
			raw: jwt(map[string]any{"sub": "system:serviceaccount:custody-system:custody-syncer-target-m1", "iat": issued.Unix(), "exp": expires.Unix(),
				"kubernetes.io": map[string]any{"namespace": "custody-system", "serviceaccount": map[string]any{"name": "custody-syncer-target-m1", "uid": "u"}}}),
			want: Token{Namespace: "custody-system", Name: "custody-syncer-target-m1", UID: "u", IssuedAt: issued, Expiry: expires},
		},
		{
			name: "the subject alone",
			raw:  jwt(map[string]any{"sub": "system:serviceaccount:ns:sa", "iat": issued.Unix(), "exp": expires.Unix()}),
			want: Token{Namespace: "ns", Name: "sa", IssuedAt: issued, Expiry: expires},
		},
		{
			name: "a legacy token that never expires",
			raw:  jwt(map[string]any{"sub": "system:serviceaccount:ns:sa", "kubernetes.io/serviceaccount/namespace": "ns"}),
			want: Token{Namespace: "ns", Name: "sa"},
		},
		{name: "a user's token", raw: jwt(map[string]any{"sub": "alice", "exp": expires.Unix()}), err: `not a service account token: subject "alice"`},
		{name: "not a JWT", raw: "abc.def", err: "not a JSON web token"},
		{name: "claims that are not JSON", raw: "a." + base64.RawURLEncoding.EncodeToString([]byte("{")) + ".c", err: "decoding the token's claims: unexpected end of JSON input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.raw)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.want.Raw = tc.raw
			if got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestRenewAt(t *testing.T) {
	for _, tc := range []struct {
		name       string
		token      Token
		renewAfter float64
		want       time.Time
		lifetime   time.Duration
	}{
		{"half of an hour", Token{IssuedAt: issued, Expiry: expires}, 0.5, issued.Add(30 * time.Minute), time.Hour},
		{"at once", Token{IssuedAt: issued, Expiry: expires}, 0, expires.Add(-time.Hour), time.Hour},
		{"three quarters of ten minutes", Token{IssuedAt: issued, Expiry: issued.Add(10 * time.Minute)}, 0.75, issued.Add(450 * time.Second), 10 * time.Minute},
		{"no issue time", Token{Expiry: expires}, 0.5, expires.Add(-5 * time.Minute), MinLifetime},
		{"a lifetime below the API server's shortest", Token{IssuedAt: issued, Expiry: issued.Add(time.Minute)}, 0.5, issued.Add(30 * time.Second), MinLifetime},
		{"a lifetime of a fraction of a second more", Token{IssuedAt: issued, Expiry: expires.Add(400 * time.Millisecond)}, 0.5, issued.Add(30*time.Minute + 200*time.Millisecond), time.Hour},
		{"never expires", Token{IssuedAt: issued}, 0.5, time.Time{}, MinLifetime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.token.RenewAt(tc.renewAfter); !got.Equal(tc.want) {
				t.Errorf("renews at %s, want %s", got, tc.want)
			}
			if got := tc.token.NextLifetime(); got != tc.lifetime {
				t.Errorf("next lifetime %s, want %s", got, tc.lifetime)
			}
		})
	}
}

func TestSameAccount(t *testing.T) {
	a := Token{Namespace: "ns", Name: "sa", UID: "1"}
	for _, tc := range []struct {
		name string
		o    Token
		want bool
	}{
		{"the same", a, true},
		{"no UID", Token{Namespace: "ns", Name: "sa"}, true},
		{"made again", Token{Namespace: "ns", Name: "sa", UID: "2"}, false},
		{"another name", Token{Namespace: "ns", Name: "sb", UID: "1"}, false},
		{"another namespace", Token{Namespace: "nt", Name: "sa", UID: "1"}, false},
	} {
		if got := a.SameAccount(tc.o); got != tc.want {
			t.Errorf("%s: %t, want %t", tc.name, got, tc.want)
		}
	}
}

func TestNewRefusesWhatItCannotRenew(t *testing.T) {
	for _, tc := range []struct {
		name  string
		token string
		err   string
	}{
		{"no token", "", "the hub config carries no token"},
		{"a token that never expires", jwt(map[string]any{"sub": "system:serviceaccount:ns:sa"}), "the token of serviceaccount ns/sa never expires"},
		{"a user's token", "opaque", "not a JSON web token"},
	} {
		if _, err := New(&rest.Config{Host: "https://hub", BearerToken: tc.token}, Options{}); err == nil || err.Error() != tc.err {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestConfigCarriesTheCurrentToken(t *testing.T) {
	raw := jwt(map[string]any{"sub": "system:serviceaccount:ns:sa", "iat": issued.Unix(), "exp": expires.Unix()})
	r, err := New(&rest.Config{Host: "https://hub:6443", BearerToken: raw, TLSClientConfig: rest.TLSClientConfig{CAData: []byte("ca")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.Config()
	if cfg.BearerToken != "" || cfg.BearerTokenFile != "" || cfg.WrapTransport == nil {
		t.Errorf("config: token %q, file %q, wrapped %t", cfg.BearerToken, cfg.BearerTokenFile, cfg.WrapTransport != nil)
	}
	data, err := r.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	back, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Host != "https://hub:6443" || back.BearerToken != raw || string(back.CAData) != "ca" || !strings.HasPrefix(back.BearerToken, "eyJ") {
		t.Errorf("kubeconfig: host %s, token %q, CA %q", back.Host, back.BearerToken, back.CAData)
	}
}

func TestRequestsCarryTheCurrentToken(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got = append(got, req.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Success"}`))
	}))
	defer srv.Close()
	first := jwt(map[string]any{"sub": "system:serviceaccount:ns:sa", "iat": issued.Unix(), "exp": expires.Unix()})
	second := jwt(map[string]any{"sub": "system:serviceaccount:ns:sa", "iat": issued.Add(time.Minute).Unix(), "exp": expires.Add(time.Minute).Unix()})
	r, err := New(&rest.Config{Host: srv.URL, BearerToken: first}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(r.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, next := range []string{first, second} {
		tok, err := Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		r.current.Store(&tok)
		resp, err := client.Get(srv.URL + "/api")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "Bearer "+first || got[1] != "Bearer "+second {
		t.Errorf("the requests carried %q", got)
	}
}
