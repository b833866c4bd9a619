package reconnect

import (
	"context"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// site is an API server of one site: it answers a list of namespaces with one named after it.
// httptest's TLS servers share one certificate, as a hub's API servers do.
func site(name string) *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"NamespaceList","apiVersion":"v1","items":[{"metadata":{"name":"` + name + `"}}]}`))
	}))
}

// answering is the name of the site that answers a list through cs, or the error.
func answering(cs kubernetes.Interface) (string, error) {
	list, err := cs.CoreV1().Namespaces().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	return list.Items[0].Name, nil
}

func TestServersGoesOnWithTheNextServerWhenOneIsLostAndStaysThere(t *testing.T) {
	a, b := site("a"), site("b")
	defer b.Close()
	// A server that refuses, listed first: never answers.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "https://" + l.Addr().String()
	_ = l.Close()

	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.Certificate().Raw})
	cfg, err := Servers(&rest.Config{Host: a.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}},
		[]string{refused, a.URL, b.URL})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := answering(cs); err != nil || got != "a" {
		t.Fatalf("with every server up, answered by %q (%v), want a, the first that answers", got, err)
	}
	a.CloseClientConnections()
	a.Close()
	if got, err := answering(cs); err != nil || got != "b" {
		t.Fatalf("with a lost, answered by %q (%v), want b", got, err)
	}
	b.CloseClientConnections()
	if got, err := answering(cs); err != nil || got != "b" {
		t.Fatalf("after b's connections broke, answered by %q (%v), want b again, the last that answered", got, err)
	}
	b.Close()
	if _, err := answering(cs); err == nil || !Unreachable(err) {
		t.Fatalf("with no server up: %v, want an error that says none could be reached", err)
	}
}

func TestServersRefusesWhatIsNotAURLAndLeavesAConfigWithoutServersAsItIs(t *testing.T) {
	if _, err := Servers(&rest.Config{}, []string{"hub:6443"}); err == nil {
		t.Error("a server without a scheme was taken")
	}
	cfg := &rest.Config{Host: "https://hub"}
	if got, err := Servers(cfg, nil); err != nil || got != cfg {
		t.Errorf("no servers: got %v, %v; want the config itself", got, err)
	}
	got, err := Servers(cfg, []string{"https://hub-a", "https://hub-b:6443"})
	if err != nil || got.Dial == nil || cfg.Dial != nil {
		t.Errorf("servers: got a config with a dialer %t (%v), the given one changed %t", got.Dial != nil, err, cfg.Dial != nil)
	}
	if addr, _ := hostPort("https://hub-a"); addr != "hub-a:443" {
		t.Errorf("https://hub-a is reached at %s, want hub-a:443", addr)
	}
}
