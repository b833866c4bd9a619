package faults

import (
	"sync"
	"time"
)

// shared is what the schedules running at once on the bed share: the members under a member
// fault, and the faults on the bed's shared parts (the controller, the hub, the storage, a
// target's cordon). The first schedule that draws such a fault starts it and the last one
// whose fault heals heals it, so that one schedule never heals another's fault early.
type shared struct {
	mu    sync.Mutex
	held  map[string]*holding
	busy  map[string]bool
	on    int       // faults in effect on the bed
	quiet time.Time // when the last fault in effect healed
}

// holding counts the schedules holding one shared fault; its lock orders the fault's start
// and heal.
type holding struct {
	mu sync.Mutex
	n  int
}

func newShared() *shared {
	return &shared{held: map[string]*holding{}, busy: map[string]bool{}}
}

// hold starts the fault named key, unless another schedule holds it already.
func (s *shared) hold(key string, start func() error) error {
	h := s.holding(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	if h.n > 1 {
		return nil
	}
	s.count(1)
	return start()
}

// letGo heals the fault named key, unless another schedule still holds it.
func (s *shared) letGo(key string, heal func() error) error {
	h := s.holding(key)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n--
	if h.n > 0 {
		return nil
	}
	defer s.count(-1)
	return heal()
}

func (s *shared) holding(key string) *holding {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.held[key]
	if !ok {
		h = &holding{}
		s.held[key] = h
	}
	return h
}

// occupy takes the member for a member fault; false when it is under another fault.
func (s *shared) occupy(member string) bool {
	s.mu.Lock()
	taken := !s.busy[member]
	s.busy[member] = true
	s.mu.Unlock()
	if taken {
		s.count(1)
	}
	return taken
}

// free gives the member back.
func (s *shared) free(member string) {
	s.mu.Lock()
	delete(s.busy, member)
	s.mu.Unlock()
	s.count(-1)
}

// count notes that a fault started (+1) or healed (-1).
func (s *shared) count(delta int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.on += delta
	if s.on == 0 {
		s.quiet = time.Now()
	}
}

// quietSince is when the last fault in effect on the bed healed; zero while one is in effect.
func (s *shared) quietSince() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on > 0 {
		return time.Time{}
	}
	return s.quiet
}
