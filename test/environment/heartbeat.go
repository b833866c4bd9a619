package environment

import (
	"context"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// heartbeatPeriod is the period Heartbeat announces for a live target: long, so that the
// target stays Ready for the whole test. A target no longer alive announces deadPeriod,
// renewed four of those ago: past its grace of three, which the health controller counts
// from no earlier than when it first reached the hub.
const (
	heartbeatPeriod = time.Hour
	deadPeriod      = time.Second
)

// Heartbeat writes the heartbeat Lease of a target as its syncer would, so that the health
// controller turns the target Ready (alive) or Unreachable (not alive, renewed long before
// the grace of three periods), for suites that run no syncer.
func Heartbeat(ctx context.Context, c client.Client, target string, alive bool) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: workloadv1alpha1.HeartbeatNamespace}}
	if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return err
	}
	period, renewed := heartbeatPeriod, time.Now()
	if !alive {
		period, renewed = deadPeriod, renewed.Add(-4*deadPeriod)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: target}}
	err := c.Get(ctx, client.ObjectKeyFromObject(lease), lease)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	lease.Spec = coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(target),
		LeaseDurationSeconds: ptr.To(int32(period.Seconds())),
		RenewTime:            &metav1.MicroTime{Time: renewed},
	}
	if apierrors.IsNotFound(err) {
		return c.Create(ctx, lease)
	}
	return c.Update(ctx, lease)
}
