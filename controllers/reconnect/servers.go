package reconnect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
)

// DialTimeout is how long a connection to one of a config's servers may take before the next
// server is tried: a server whose site is lost may not refuse, only stay silent.
const DialTimeout = 3 * time.Second

// Servers returns a copy of cfg that reaches whichever of servers answers, for a cluster
// served by several API servers over one etcd, such as a hub across sites. Each new
// connection goes to the server the last one reached, or, when that one refuses or stays
// silent for DialTimeout, to the next one in the list. A connection broken with its server
// (a stopped server closes them; a lost one fails HTTP/2's health pings) is made again the
// same way, and client-go's watches and requests go on over it.
//
// The choice is made below TLS, so every server must present a certificate valid for
// cfg.Host's name (or cfg.ServerName), as API servers sharing one serving certificate do.
// client-go takes one server per config; a load balancer or a DNS name would be a part of
// its own to keep alive in a site that may be the one lost, and DNS answers are cached for
// their TTL. With no servers, cfg is returned as it is.
func Servers(cfg *rest.Config, servers []string) (*rest.Config, error) {
	if len(servers) == 0 {
		return cfg, nil
	}
	d := &dialer{}
	for _, s := range servers {
		addr, err := hostPort(s)
		if err != nil {
			return nil, err
		}
		d.addrs = append(d.addrs, addr)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Dial = d.DialContext
	return cfg, nil
}

// hostPort is the address of the server at URL s: its host and port, 443 if it names none.
func hostPort(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("server %q is not a URL such as https://hub.example.com:6443", s)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	return net.JoinHostPort(u.Hostname(), "443"), nil
}

// dialer connects to the first of its addresses that answers, from the last one that did.
type dialer struct {
	addrs []string
	// last is the index in addrs of the address the last connection was made to.
	last atomic.Int32
	net  net.Dialer
}

// DialContext connects to one of the servers, whatever address client-go asks for: the
// config's Host is the only one it dials.
func (d *dialer) DialContext(ctx context.Context, network, _ string) (net.Conn, error) {
	first := int(d.last.Load())
	var errs []error
	for i := range d.addrs {
		at := (first + i) % len(d.addrs)
		attempt, cancel := context.WithTimeout(ctx, DialTimeout)
		conn, err := d.net.DialContext(attempt, network, d.addrs[at])
		cancel()
		if err == nil {
			d.last.Store(int32(at))
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
