package replication

import (
	"context"
	"testing"

	volsyncv1alpha1 "github.com/backube/volsync/api/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/custody-dev/custody/api"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	"github.com/custody-dev/custody/controllers/syncer/internal/syncio"
	"github.com/custody-dev/custody/controllers/syncer/transform"
)

// TestSendsAnewToADestinationMadeAgain: a source whose destination was made again, at the
// same address, is made again too, so that VolSync syncs it at once rather than at its next
// scheduled time; one whose destination is the same is kept.
func TestSendsAnewToADestinationMadeAgain(t *testing.T) {
	ctx := context.Background()
	scheme := api.NewScheme()
	if err := volsyncv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	const ns, address = "custody-team-a", "volsync-rsync-tls-dst-custody-data.custody-team-a.m2"
	vr := &storagev1alpha1.VolumeReplication{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "data"},
		Spec:       storagev1alpha1.VolumeReplicationSpec{Source: "m1", Destination: "m2", Schedule: "*/5 * * * *"},
	}
	for _, c := range []struct {
		name    string
		made    types.UID // the destination the source was made for
		reports types.UID // the destination that reports now
		kept    bool
	}{
		{"the same destination", "rd-1", "rd-1", true},
		{"a destination made again at the same address", "rd-1", "rd-2", false},
		{"a destination made again, for a source made before destinations reported theirs", "", "rd-2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var applies int
			hub := fakeHub(scheme, &applies, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}})
			member := fake.NewClientBuilder().WithScheme(scheme).Build()
			r := &Reconciler{Clients: syncio.Clients{Hub: hub, HubReader: hub, Member: member, MemberReader: member},
				SyncTargetName: "m1", Target: transform.Target{Key: "m1", Hub: "hub"}}
			send := func(uid types.UID) {
				t.Helper()
				vr := vr.DeepCopy()
				vr.Status.Destination = &storagev1alpha1.ReplicationDestinationStatus{ReportedBy: "m2", Address: address, Port: 8000, UID: uid}
				if _, err := r.send(ctx, vr, ns); err != nil {
					t.Fatal(err)
				}
			}
			send(c.made) // makes the source
			send(c.reports)
			err := member.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName(vr.Name)}, &volsyncv1alpha1.ReplicationSource{})
			if kept := err == nil; kept != c.kept || (err != nil && !apierrors.IsNotFound(err)) {
				t.Fatalf("the source is kept: %v, want %v (%v)", kept, c.kept, err)
			}
			if c.kept {
				return
			}
			send(c.reports) // makes it again
			rs := &volsyncv1alpha1.ReplicationSource{}
			if err := member.Get(ctx, client.ObjectKey{Namespace: ns, Name: objectName(vr.Name)}, rs); err != nil {
				t.Fatal(err)
			}
			if got := sentTo(rs); got != c.reports || ptr.Deref(rs.Spec.RsyncTLS.Address, "") != address {
				t.Fatalf("the source made again sends to %s (%s), want %s", got, ptr.Deref(rs.Spec.RsyncTLS.Address, ""), c.reports)
			}
		})
	}
}
