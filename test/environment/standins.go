package environment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/heartbeat"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// StandIns are SyncTargets with no member behind them, whose heartbeats run as their syncers'
// would: each has the syncer's own heartbeat.Renewer, which renews its Lease on the hub once
// per period with the clean report in it, and a status reported as a syncer reports it (the
// member's storage classes, synced resources and Clean conditions, under the syncer's field
// manager). That is all the hub sees of a member, so the hub judges them Ready and
// schedulable as it does real ones. Silence makes a stand-in's member stop answering: its
// renewals stop, as a real syncer's do.
type StandIns struct {
	// Names are the stand-ins' SyncTargets, in the order they were made.
	Names []string

	hub    client.Client
	mu     sync.Mutex
	quiet  map[string]bool
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// StandInReport is what a stand-in's syncer reports into its SyncTarget's status.
type StandInReport struct {
	StorageClasses  []workloadv1alpha1.StorageClassInfo
	SyncedResources []string
	// Clean are the Clean conditions of its storage domains.
	Clean []metav1.Condition
}

// ReportOf is what the syncer of the SyncTarget t reported: a stand-in reports the same as a
// real member of the same storage.
func ReportOf(t *workloadv1alpha1.SyncTarget) StandInReport {
	r := StandInReport{StorageClasses: t.Status.StorageClasses, SyncedResources: t.Status.SyncedResources}
	for _, c := range t.Status.Conditions {
		if strings.HasPrefix(c.Type, workloadv1alpha1.CleanCondition("")) {
			r.Clean = append(r.Clean, c)
		}
	}
	return r
}

// StartStandIns creates the targets on the hub c, reports into each status what report
// says, and renews their heartbeat Leases every period until Stop. The first renewals are
// spread over one period, as syncers that started at different times renew. It returns once
// every target was made; the health controller turns them Ready within a period.
func StartStandIns(ctx context.Context, c client.Client, targets []*workloadv1alpha1.SyncTarget, report StandInReport, period time.Duration) (*StandIns, error) {
	renewing, cancel := context.WithCancel(context.Background())
	s := &StandIns{hub: c, quiet: map[string]bool{}, cancel: cancel}
	for _, t := range targets {
		if err := c.Create(ctx, t); err != nil {
			s.Stop()
			return nil, fmt.Errorf("making stand-in %s: %w", t.Name, err)
		}
		s.Names = append(s.Names, t.Name)
		if err := s.report(ctx, t.Name, report); err != nil {
			s.Stop()
			return nil, err
		}
	}
	clean := map[string]metav1.ConditionStatus{}
	for _, cond := range report.Clean {
		clean[strings.TrimPrefix(cond.Type, workloadv1alpha1.CleanCondition(""))] = cond.Status
	}
	for i, name := range s.Names {
		m := member{s: s, name: name, clean: clean, reports: &heartbeat.Reports{}}
		renewer := &heartbeat.Renewer{Hub: c, HubReader: c, MemberReader: m, SyncTargetName: name,
			Period: period, MinRetry: period / 10, Reports: m.reports}
		after := period * time.Duration(i) / time.Duration(len(s.Names))
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			select {
			case <-renewing.Done():
				return
			case <-time.After(after):
			}
			_ = renewer.Start(renewing)
		}()
	}
	return s, nil
}

// report applies the syncer's part of the status of the stand-in name.
func (s *StandIns) report(ctx context.Context, name string, r StandInReport) error {
	st := workloadv1alpha1.SyncTargetStatus{StorageClasses: r.StorageClasses, SyncedResources: r.SyncedResources, Conditions: r.Clean}
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&st)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": content}}
	u.SetGroupVersionKind(workloadv1alpha1.GroupVersion.WithKind("SyncTarget"))
	u.SetName(name)
	if err := s.hub.Status().Patch(ctx, u, client.Apply, client.FieldOwner(transform.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("reporting stand-in %s: %w", name, err)
	}
	return nil
}

// Silence makes the named stand-ins' members stop answering, so that their Leases are no
// longer renewed, or answer again.
func (s *StandIns) Silence(names []string, quiet bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range names {
		s.quiet[name] = quiet
	}
}

// Stop stops the renewals and waits until they stopped; it may run more than once.
func (s *StandIns) Stop() {
	s.cancel()
	s.done.Wait()
}

// Delete stops the renewals and deletes the stand-ins' SyncTargets and Leases.
func (s *StandIns) Delete(ctx context.Context) error {
	s.Stop()
	var errs []error
	for _, name := range s.Names {
		lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: name}}
		errs = append(errs, client.IgnoreNotFound(s.hub.Delete(ctx, lease)),
			client.IgnoreNotFound(s.hub.Delete(ctx, &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: name}})))
	}
	return errors.Join(errs...)
}

// errSilenced is what a silenced stand-in's member answers.
var errSilenced = errors.New("the stand-in's member is silenced")

// member is a stand-in's member as its Renewer reads it: it answers unless silenced, and
// whenever it answers it has a clean report of that moment, as a syncer's heartbeat
// reconciler makes one each period: each renewal carries a report of its own time.
type member struct {
	s       *StandIns
	name    string
	clean   map[string]metav1.ConditionStatus
	reports *heartbeat.Reports
}

func (m member) answer() error {
	m.s.mu.Lock()
	quiet := m.s.quiet[m.name]
	m.s.mu.Unlock()
	if quiet {
		return errSilenced
	}
	m.reports.Set(workloadv1alpha1.CleanReport{Time: metav1.NowMicro(), Clean: m.clean})
	return nil
}

func (m member) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return m.answer()
}

func (m member) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return m.answer()
}

// WaitReady waits until the hub judges every stand-in Ready.
func (s *StandIns) WaitReady(ctx context.Context) error {
	return targetsReady(ctx, s.hub, s.Names, "stand-ins")
}
