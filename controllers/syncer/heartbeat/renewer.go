package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// Reports hands the Reconciler's last clean report to the Renewer.
type Reports struct {
	mu   sync.Mutex
	last *workloadv1alpha1.CleanReport
}

// Set hands the Renewer a clean report, whose conditions the SyncTarget's status holds.
func (r *Reports) Set(report workloadv1alpha1.CleanReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = &report
}

// Last is the last clean report; nil before the first.
func (r *Reports) Last() *workloadv1alpha1.CleanReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

// Renewer renews the target's heartbeat Lease on the hub once per period, as long as the
// member answers, with the last clean report in it (workloadv1alpha1.CleanReportAnnotation):
// one write per period, which no report holds up. It creates the Lease, and its namespace,
// when missing. A renewal that fails is tried again sooner, never later than a period.
type Renewer struct {
	// Hub writes the Lease; HubReader reads it past any cache.
	Hub       client.Client
	HubReader client.Reader
	// MemberReader reads the member directly: a heartbeat says the member answers too.
	MemberReader client.Reader
	// SyncTargetName names the target, and its Lease.
	SyncTargetName string
	// Period is how often the Lease is renewed.
	Period time.Duration
	// MinRetry is the first delay after a failed renewal.
	MinRetry time.Duration
	// Reports holds the clean report each renewal carries.
	Reports *Reports

	// lease is the Lease as last written: a renewal updates it without reading it again.
	lease *coordinationv1.Lease
}

// NeedLeaderElection: only the syncer that leads renews the heartbeat, as only it syncs.
func (r *Renewer) NeedLeaderElection() bool { return true }

// Start renews the Lease until ctx ends.
func (r *Renewer) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("heartbeat")
	retry, failing := r.MinRetry, false
	for {
		wait := r.Period
		switch err := r.renew(ctx); {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			if !failing {
				log.Error(err, "Renewing the heartbeat Lease")
			}
			failing, wait, retry = true, retry, min(2*retry, r.Period)
		default:
			if failing {
				log.Info("Renewed the heartbeat Lease again")
			}
			failing, retry = false, r.MinRetry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// renew renews the Lease once, if the member answers: it updates the Lease as last written,
// or, after a failure, as read again, or creates it when there is none.
func (r *Renewer) renew(ctx context.Context) error {
	if err := r.MemberReader.List(ctx, &storagev1.StorageClassList{}, client.Limit(1)); err != nil {
		return fmt.Errorf("the member does not answer: %w", err)
	}
	if r.lease == nil {
		key := client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: r.SyncTargetName}
		lease := &coordinationv1.Lease{}
		if err := r.HubReader.Get(ctx, key, lease); client.IgnoreNotFound(err) != nil {
			return err
		}
		lease.Namespace, lease.Name = key.Namespace, key.Name
		r.lease = lease
	}
	lease := r.lease.DeepCopy()
	if err := r.fill(lease); err != nil {
		return err
	}
	var err error
	if lease.ResourceVersion == "" {
		err = r.create(ctx, lease)
	} else {
		err = r.Hub.Update(ctx, lease)
	}
	if err != nil {
		// Read it again next time: another writer, or none left.
		r.lease = nil
		return err
	}
	r.lease = lease
	return nil
}

// fill renews the Lease's spec as of now and puts the last clean report in, or takes out
// one that is not this syncer's.
func (r *Renewer) fill(lease *coordinationv1.Lease) error {
	now := time.Now()
	acquired := lease.Spec.AcquireTime
	if acquired == nil {
		acquired = &metav1.MicroTime{Time: now}
	}
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To("syncer/" + r.SyncTargetName),
		LeaseDurationSeconds: ptr.To(int32(max(1, math.Ceil(r.Period.Seconds())))),
		AcquireTime:          acquired,
		RenewTime:            &metav1.MicroTime{Time: now},
	}
	report := r.Reports.Last()
	if report == nil {
		delete(lease.Annotations, workloadv1alpha1.CleanReportAnnotation)
		return nil
	}
	v, err := json.Marshal(report)
	if err != nil {
		return err
	}
	metav1.SetMetaDataAnnotation(&lease.ObjectMeta, workloadv1alpha1.CleanReportAnnotation, string(v))
	return nil
}

// create creates the Lease, and the hub namespace of Leases first when it is missing.
func (r *Renewer) create(ctx context.Context, lease *coordinationv1.Lease) error {
	err := r.Hub.Create(ctx, lease)
	if apierrors.IsNotFound(err) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: lease.Namespace}}
		if err := r.Hub.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		err = r.Hub.Create(ctx, lease)
	}
	if err == nil {
		ctrl.LoggerFrom(ctx).Info("Created the heartbeat Lease", "lease", client.ObjectKeyFromObject(lease))
	}
	return err
}
