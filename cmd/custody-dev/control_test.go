package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/custody-dev/custody/test/environment"
)

// fakeMembers stands in for the environment: members whose API server and syncer are flags,
// each in a site of the hub, which is down or up.
type fakeMembers struct {
	mu   sync.Mutex
	list []environment.MemberStatus
	down map[string]bool
}

func newFakeMembers() *fakeMembers {
	return &fakeMembers{list: []environment.MemberStatus{
		{Name: "m1", Location: "loc", Site: "site-1", APIServer: true, Syncer: true},
		{Name: "m2", Location: "loc", Site: "site-2", APIServer: true, Syncer: true},
	}, down: map[string]bool{"site-1": false, "site-2": false, "witness": false}}
}

func (f *fakeMembers) StopSite(site string) error {
	return f.site(site, true, func(s *environment.MemberStatus) { s.Syncer, s.APIServer = false, false })
}

func (f *fakeMembers) StartSite(_ context.Context, site string) error {
	return f.site(site, false, func(s *environment.MemberStatus) { s.Syncer, s.APIServer = true, true })
}

// site takes the site down or up, and does to each of its members.
func (f *fakeMembers) site(site string, down bool, do func(*environment.MemberStatus)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	was, ok := f.down[site]
	if !ok {
		return environment.ErrNoSite
	}
	if was == down {
		return &environment.StateError{Message: "site " + site + " is as asked already"}
	}
	f.down[site] = down
	for i := range f.list {
		if f.list[i].Site == site {
			do(&f.list[i])
		}
	}
	return nil
}

func (f *fakeMembers) StopMember(name string, partition bool) error {
	return f.change(name, func(s *environment.MemberStatus) error {
		if !s.Syncer {
			return &environment.StateError{Message: name + " is stopped already"}
		}
		s.Syncer, s.APIServer = false, partition
		return nil
	})
}

func (f *fakeMembers) StartMember(_ context.Context, name string) error {
	return f.change(name, func(s *environment.MemberStatus) error {
		if s.Syncer {
			return &environment.StateError{Message: name + " runs already"}
		}
		s.Syncer, s.APIServer = true, true
		return nil
	})
}

func (f *fakeMembers) change(name string, do func(*environment.MemberStatus) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.list {
		if f.list[i].Name == name {
			return do(&f.list[i])
		}
	}
	return environment.ErrNoMember
}

func (f *fakeMembers) MemberStatuses() []environment.MemberStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]environment.MemberStatus(nil), f.list...)
}

func (f *fakeMembers) MemberStatus(name string) (environment.MemberStatus, error) {
	for _, s := range f.MemberStatuses() {
		if s.Name == name {
			return s, nil
		}
	}
	return environment.MemberStatus{}, environment.ErrNoMember
}

// serve serves the control API for env in a new state directory, and returns the directory
// and what the server printed.
func serve(t *testing.T, env members) (string, *bytes.Buffer) {
	t.Helper()
	dir := t.TempDir()
	events := &bytes.Buffer{}
	shutdown, err := serveControl(context.Background(), env, filepath.Join(dir, socketName), events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown() })
	return dir, events
}

// runLine runs a command line against the custody-dev whose state is in dir.
func runLine(dir string, args ...string) (string, error) {
	c := findCommand(args[0])
	if c == nil {
		return "", errors.New("no command " + args[0])
	}
	out := &bytes.Buffer{}
	err := runCommand(context.Background(), c, append(args[1:], "--dir", dir), out, io.Discard)
	return out.String(), err
}

// TestCommands runs each command, in turn, against one server, which keeps the members'
// state from one step to the next.
func TestCommands(t *testing.T) {
	dir, events := serve(t, newFakeMembers())
	steps := []struct {
		args    []string
		out     string
		wantErr string
	}{
		{args: []string{"stop", "m1"}, out: "m1 is stopped: its syncer and API server are down\n"},
		{args: []string{"stop", "--partition", "m2"}, out: "m2 is partitioned: its syncer is stopped, its API server runs\n"},
		{args: []string{"status"}, out: "" +
			"MEMBER   LOCATION   SITE     STATE         API SERVER   SYNCER\n" +
			"m1       loc        site-1   Stopped       stopped      stopped\n" +
			"m2       loc        site-2   Partitioned   running      stopped\n"},
		{args: []string{"stop", "m1"}, wantErr: "m1 is stopped already"},
		{args: []string{"stop", "m3"}, wantErr: "no such member"},
		{args: []string{"start", "m1"}, out: "m1 runs: its API server and syncer are up\n"},
		{args: []string{"start", "m1"}, wantErr: "m1 runs already"},
		{args: []string{"stop", "m1", "--partition"}, out: "m1 is partitioned: its syncer is stopped, its API server runs\n"},
		{args: []string{"stop"}, wantErr: errUsage.Error()},
		{args: []string{"status", "m1"}, wantErr: errUsage.Error()},
		{args: []string{"start", "m1", "--partition"}, wantErr: errUsage.Error()},
		{args: []string{"stop-site", "site-1"}, out: "site site-1 is lost: its etcd member, API server and controller replica, and 1 members\n" +
			"m1 is stopped: its syncer and API server are down\n"},
		{args: []string{"stop-site", "site-1"}, wantErr: "site site-1 is as asked already"},
		{args: []string{"stop-site", "site-9"}, wantErr: "no such site"},
		{args: []string{"start-site", "site-1"}, out: "site site-1 is back: its etcd member, API server and controller replica, and 1 members\n" +
			"m1 runs: its API server and syncer are up\n"},
		{args: []string{"stop-site"}, wantErr: errUsage.Error()},
	}
	for _, s := range steps {
		out, err := runLine(dir, s.args...)
		if s.wantErr != "" {
			if err == nil || err.Error() != s.wantErr {
				t.Fatalf("%v: error %v, want %q", s.args, err, s.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", s.args, err)
		}
		if out != s.out {
			t.Fatalf("%v printed\n%s\nwant\n%s", s.args, out, s.out)
		}
	}
	want := "m1 is stopped: its syncer and API server are down\n" +
		"m2 is partitioned: its syncer is stopped, its API server runs\n" +
		"m1 runs: its API server and syncer are up\n" +
		"m1 is partitioned: its syncer is stopped, its API server runs\n" +
		"m1 is stopped: its syncer and API server are down\n" +
		"m1 runs: its API server and syncer are up\n"
	if events.String() != want {
		t.Errorf("the server printed\n%s\nwant\n%s", events, want)
	}
}

// TestNothingRuns checks what a command says when no custody-dev serves the directory,
// whether the socket is missing or left by a process that died.
func TestNothingRuns(t *testing.T) {
	dir := t.TempDir()
	want := "no Custody runs with state in " + dir + ": start it with make run"
	if _, err := runLine(dir, "status"); err == nil || err.Error() != want {
		t.Errorf("with no socket: %v, want %q", err, want)
	}
	leaveSocket(t, filepath.Join(dir, socketName))
	if _, err := runLine(dir, "stop", "m1"); err == nil || err.Error() != want {
		t.Errorf("with a socket nobody serves: %v, want %q", err, want)
	}
}

// TestServeControlClaimsTheSocket checks that a server replaces a socket left by a process
// that died, refuses one another server answers on, and removes its own on shutdown.
func TestServeControlClaimsTheSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), socketName)
	leaveSocket(t, path)
	shutdown, err := serveControl(context.Background(), newFakeMembers(), path, io.Discard)
	if err != nil {
		t.Fatalf("replacing a stale socket: %v", err)
	}
	if _, err := serveControl(context.Background(), newFakeMembers(), path, io.Discard); err == nil || !strings.Contains(err.Error(), "runs already") {
		t.Errorf("serving beside a running server: %v, want an error that it runs already", err)
	}
	if err := shutdown(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left after shutdown: %v", err)
	}
}

// leaveSocket leaves a socket file at path that nothing serves, as a process that died does.
func leaveSocket(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
