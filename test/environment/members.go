package environment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/custody-dev/custody/test/testbed"
)

// log logs what happens to the members.
var log = ctrl.Log.WithName("environment")

// ErrNoMember is returned for a name that is not one of the environment's members.
var ErrNoMember = errors.New("no such member")

// StateError is returned for a member that is already as asked: stopping a stopped member,
// or starting a running one.
type StateError struct{ Message string }

func (e *StateError) Error() string { return e.Message }

// MemberStatus says what of a member runs.
type MemberStatus struct {
	Name     string `json:"name"`
	Location string `json:"location"`
	// Site is the hub site the member runs in; empty for a hub of one site.
	Site string `json:"site,omitempty"`
	// APIServer is true while its API server runs.
	APIServer bool `json:"apiServer"`
	// Syncer is true from the syncer's start until it is stopped.
	Syncer bool `json:"syncer"`
}

// StopMember loses the named member: it stops its syncer and its API server, as if the
// member were gone; its etcd and kube-controller-manager keep running, as
// testbed.Cluster.StopAPIServer leaves them. With partition, only the syncer stops: the
// member runs on, but it and the hub no longer hear of each other. StartMember undoes either.
func (e *Environment) StopMember(name string, partition bool) error {
	m, err := e.lookUp(name)
	if err != nil {
		return err
	}
	e.lifecycle.Lock()
	defer e.lifecycle.Unlock()
	return e.stopMember(name, m, partition)
}

// StopMembers loses the named members at once, as a disaster loses them: each as
// StopMember does.
func (e *Environment) StopMembers(names ...string) error {
	return e.stopAtOnce(names, nil)
}

// stopAtOnce stops the named members side by side, and runs also, unless nil, beside them.
func (e *Environment) stopAtOnce(names []string, also func() error) error {
	errs := make([]error, len(names)+1)
	members := make([]*testbed.Cluster, len(names))
	for i, name := range names {
		m, err := e.lookUp(name)
		if err != nil {
			return err
		}
		members[i] = m
	}
	e.lifecycle.Lock()
	defer e.lifecycle.Unlock()
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { errs[i] = e.stopMember(name, members[i], false) })
	}
	if also != nil {
		wg.Go(func() { errs[len(names)] = also() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stopMember is StopMember, under e.lifecycle.
func (e *Environment) stopMember(name string, m *testbed.Cluster, partition bool) error {
	if s := e.status(name, ""); !s.Syncer {
		return stoppedAlready(s)
	}
	if err := e.StopSyncer(name); err != nil {
		return fmt.Errorf("stopping the syncer of %s: %w", name, err)
	}
	if partition {
		log.Info("Partitioned member: its syncer stopped", "member", name)
		return nil
	}
	if err := m.StopAPIServer(); err != nil {
		return fmt.Errorf("stopping the API server of %s: %w", name, err)
	}
	log.Info("Stopped member: its syncer and API server stopped", "member", name)
	return nil
}

// StartMember brings back what StopMember stopped: the API server, when it had stopped, then
// the syncer. It returns once the API server answers and the syncer was started.
func (e *Environment) StartMember(ctx context.Context, name string) error {
	m, err := e.lookUp(name)
	if err != nil {
		return err
	}
	e.lifecycle.Lock()
	defer e.lifecycle.Unlock()
	s := e.status(name, "")
	if s.Syncer {
		return &StateError{name + " runs already"}
	}
	if !s.APIServer {
		if err := m.StartAPIServer(ctx); err != nil {
			return fmt.Errorf("starting the API server of %s: %w", name, err)
		}
	}
	if err := e.StartSyncer(name); err != nil {
		return err
	}
	log.Info("Started member", "member", name)
	return nil
}

// MemberStatuses lists the members in the order of their Locations, with what of each runs.
func (e *Environment) MemberStatuses() []MemberStatus {
	var out []MemberStatus
	for _, l := range e.opts.Locations {
		for _, m := range l.Members {
			out = append(out, e.status(m, l.Name))
		}
	}
	return out
}

// MemberStatus returns the status of the named member.
func (e *Environment) MemberStatus(name string) (MemberStatus, error) {
	for _, s := range e.MemberStatuses() {
		if s.Name == name {
			return s, nil
		}
	}
	return MemberStatus{}, e.noMember(name)
}

// status reads what of the named member runs.
func (e *Environment) status(name, location string) MemberStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	m := e.Member(name)
	return MemberStatus{Name: name, Location: location, Site: m.Site, APIServer: m.APIServerRunning(), Syncer: e.syncers[name] != nil}
}

// stoppedAlready is the error for stopping a member whose syncer is stopped.
func stoppedAlready(s MemberStatus) error {
	if !s.APIServer {
		return &StateError{s.Name + " is stopped already"}
	}
	return &StateError{s.Name + " is partitioned already: start brings it back"}
}

// lookUp returns the named member's cluster.
func (e *Environment) lookUp(name string) (*testbed.Cluster, error) {
	m := e.Member(name)
	if m == nil {
		return nil, e.noMember(name)
	}
	return m, nil
}

// noMember is the error for a name that is no member's; it names the members.
func (e *Environment) noMember(name string) error {
	var names []string
	for _, m := range e.Members {
		names = append(names, m.Name)
	}
	return fmt.Errorf("%w %q: the members are %s", ErrNoMember, name, strings.Join(names, ", "))
}
