package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/custody-dev/custody/test/environment"
)

// The control API, served by a running custody-dev on a unix socket in its state directory:
//
//	GET  /members               the members' statuses
//	POST /members/{name}/stop   stop a member; ?partition=true stops only its syncer
//	POST /members/{name}/start  bring back what stop stopped
//	POST /sites/{name}/stop     lose a site of a hub across sites, with its members
//	POST /sites/{name}/start    bring back what stop stopped
//
// Stop and start answer with the member's status, or the statuses of the site's members; an
// error answers with its message as plain
// text: 404 for an unknown member or site, 409 for a member already as asked, 500 otherwise.

// socketName is the control socket's file in the state directory.
const socketName = "control.sock"

// members is what the control API acts on: the running environment.
type members interface {
	StopMember(name string, partition bool) error
	StartMember(ctx context.Context, name string) error
	MemberStatuses() []environment.MemberStatus
	MemberStatus(name string) (environment.MemberStatus, error)
	StopSite(site string) error
	StartSite(ctx context.Context, site string) error
}

// controlServer serves the control API.
type controlServer struct {
	env members
	// ctx bounds what a request starts, past the request itself: a start goes on when its
	// client gives up.
	ctx context.Context
	// events gets one line per member stopped or started.
	events io.Writer
}

// serveControl serves the control API for env on the socket at path until shutdown is called,
// which waits for the requests under way and removes the socket. A socket left by a process
// that died is replaced; one that answers is another custody-dev's, and an error.
func serveControl(ctx context.Context, env members, path string, events io.Writer) (shutdown func() error, err error) {
	if err := claimSocket(path); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	s := &controlServer{env: env, ctx: ctx, events: events}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /members", s.list)
	mux.HandleFunc("POST /members/{name}/stop", s.stop)
	mux.HandleFunc("POST /members/{name}/start", s.start)
	mux.HandleFunc("POST /sites/{name}/stop", s.stopSite)
	mux.HandleFunc("POST /sites/{name}/start", s.startSite)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	return func() error {
		// Let a stop or start under way finish (ctx's end cuts a start short), so that the
		// environment stops only after it.
		err := srv.Shutdown(context.Background())
		// Closing the listener removes the socket, now even if Serve has yet to begin.
		_ = l.Close()
		return err
	}, nil
}

// claimSocket removes a socket at path that nothing serves.
func claimSocket(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("a Custody runs already with state in %s", filepath.Dir(path))
	}
	return os.Remove(path)
}

func (s *controlServer) list(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, s.env.MemberStatuses())
}

func (s *controlServer) stop(w http.ResponseWriter, r *http.Request) {
	partition := r.URL.Query().Get("partition") == "true"
	s.act(w, r.PathValue("name"), func(name string) error { return s.env.StopMember(name, partition) })
}

func (s *controlServer) start(w http.ResponseWriter, r *http.Request) {
	s.act(w, r.PathValue("name"), func(name string) error { return s.env.StartMember(s.ctx, name) })
}

func (s *controlServer) stopSite(w http.ResponseWriter, r *http.Request) {
	s.actOnSite(w, r.PathValue("name"), s.env.StopSite)
}

func (s *controlServer) startSite(w http.ResponseWriter, r *http.Request) {
	s.actOnSite(w, r.PathValue("name"), func(site string) error { return s.env.StartSite(s.ctx, site) })
}

// actOnSite runs f on the named site and answers with the statuses of its members, or f's
// error.
func (s *controlServer) actOnSite(w http.ResponseWriter, site string, f func(string) error) {
	if err := f(site); err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	var members []environment.MemberStatus
	for _, m := range s.env.MemberStatuses() {
		if m.Site == site {
			members = append(members, m)
			fmt.Fprintln(s.events, describe(m))
		}
	}
	writeJSON(w, members)
}

// act runs f on the named member and answers with the member's status, or f's error.
func (s *controlServer) act(w http.ResponseWriter, name string, f func(string) error) {
	if err := f(name); err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	st, err := s.env.MemberStatus(name)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	fmt.Fprintln(s.events, describe(st))
	writeJSON(w, st)
}

// statusOf is the HTTP status of an error of the environment.
func statusOf(err error) int {
	var state *environment.StateError
	switch {
	case errors.Is(err, environment.ErrNoMember), errors.Is(err, environment.ErrNoSite):
		return http.StatusNotFound
	case errors.As(err, &state):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// controlClient calls the control API of the custody-dev whose state is in dir.
type controlClient struct {
	dir  string
	http *http.Client
}

func newControlClient(dir string) *controlClient {
	path := filepath.Join(dir, socketName)
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return &controlClient{dir: dir, http: &http.Client{Transport: &http.Transport{DialContext: dial}}}
}

// statuses lists the members' statuses.
func (c *controlClient) statuses(ctx context.Context) ([]environment.MemberStatus, error) {
	var out []environment.MemberStatus
	return out, c.call(ctx, http.MethodGet, "/members", &out)
}

// stop stops the named member, or only its syncer with partition, and returns its status.
func (c *controlClient) stop(ctx context.Context, name string, partition bool) (environment.MemberStatus, error) {
	path := "/members/" + url.PathEscape(name) + "/stop"
	if partition {
		path += "?partition=true"
	}
	var out environment.MemberStatus
	return out, c.call(ctx, http.MethodPost, path, &out)
}

// start brings back the named member and returns its status.
func (c *controlClient) start(ctx context.Context, name string) (environment.MemberStatus, error) {
	var out environment.MemberStatus
	return out, c.call(ctx, http.MethodPost, "/members/"+url.PathEscape(name)+"/start", &out)
}

// site stops or starts (do) the named site and returns the statuses of its members.
func (c *controlClient) site(ctx context.Context, name, do string) ([]environment.MemberStatus, error) {
	var out []environment.MemberStatus
	return out, c.call(ctx, http.MethodPost, "/sites/"+url.PathEscape(name)+"/"+do, &out)
}

// call sends a request and decodes the answer into out. An error answer becomes an error
// with the answer's message, and a socket that nobody serves says that nothing runs.
func (c *controlClient) call(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://custody-dev"+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no Custody runs with state in %s: start it with make run", c.dir)
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		return errors.New(strings.TrimSpace(string(msg)))
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
