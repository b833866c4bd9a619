package app

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulingv1alpha1 "github.com/custody-dev/custody/api/scheduling/v1alpha1"
	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

func TestDescribePair(t *testing.T) {
	p := &schedulingv1alpha1.LocationPair{
		ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: schedulingv1alpha1.LocationPairSpec{Primary: "east", Secondary: "west", ReplicationInterval: "5m",
			FailoverThreshold: &metav1.Duration{Duration: 2 * time.Minute}},
		Status: schedulingv1alpha1.LocationPairStatus{ActiveLocation: "west", Phase: schedulingv1alpha1.PairFailedOver,
			Volumes: 2, ProtectedVolumes: 1, OldestLastSyncTime: ago(8 * time.Minute),
			LastAction: &schedulingv1alpha1.PairAction{Mode: schedulingv1alpha1.Failover, Automatic: true, From: "east", To: "west",
				Progression: "Completed", StartTime: *ago(time.Hour), CompletionTime: ago(59 * time.Minute),
				Duration: &metav1.Duration{Duration: time.Minute}, OldestReplicaTime: ago(64 * time.Minute)},
			Conditions: []metav1.Condition{{Type: "DataProtected", Status: metav1.ConditionFalse, Reason: "NoReplica", Message: "1 of 2 volumes have no replica yet"}}},
	}
	replications := []storagev1alpha1.VolumeReplication{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "orders"},
			Spec: storagev1alpha1.VolumeReplicationSpec{Source: "w1", Destination: "e1"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "catalog"},
			Spec: storagev1alpha1.VolumeReplicationSpec{Source: "w1", Destination: "e2"},
			Status: storagev1alpha1.VolumeReplicationStatus{
				Source:      &storagev1alpha1.ReplicationSourceStatus{LastSyncTime: ago(7 * time.Minute), Result: "Successful"},
				Destination: &storagev1alpha1.ReplicationDestinationStatus{LatestImage: "snap-1", LatestImageReady: true, LatestImageTime: ago(8 * time.Minute)}}},
	}
	events := []corev1.Event{{Type: corev1.EventTypeWarning, Reason: "Failover", Message: "Failover from east to west (automatic: true)",
		ReportingController: "custody-dr", EventTime: metav1.NewMicroTime(ago(time.Hour).Time)}}
	var out bytes.Buffer
	if err := describePair(&out, p, replications, events, now); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"Name:                shop\n" +
		"Primary:             east\n" +
		"Secondary:           west\n" +
		"Active:              west\n" +
		"Declared Active:     <none>\n" +
		"Phase:               FailedOver\n" +
		"Interval:            5m\n" +
		"Failover Threshold:  2m0s\n" +
		"Protected Volumes:   1/2\n" +
		"Oldest Replica:      2026-07-01T11:52:00Z (8m ago)\n" +
		"Last Action:\n" +
		"  Mode:                     Failover\n" +
		"  Automatic:                true\n" +
		"  From:                     east\n" +
		"  To:                       west\n" +
		"  Progression:              Completed\n" +
		"  Started:                  2026-07-01T11:00:00Z (60m ago)\n" +
		"  Completed:                2026-07-01T11:01:00Z (59m ago)\n" +
		"  Duration:                 1m0s\n" +
		"  Oldest Replica Restored:  2026-07-01T10:56:00Z (64m ago)\n" +
		"Conditions:\n" +
		"  Type           Status  Reason     Message\n" +
		"  ----           ------  ------     -------\n" +
		"  DataProtected  False   NoReplica  1 of 2 volumes have no replica yet\n" +
		"Volumes:\n" +
		"  Volume        Source  Destination  Replica               Lag     Last Sync                      Result\n" +
		"  ------        ------  -----------  -------               ---     ---------                      ------\n" +
		"  shop/catalog  w1      e2           2026-07-01T11:52:00Z  8m      2026-07-01T11:53:00Z (7m ago)  Successful\n" +
		"  shop/orders   w1      e1           <none>                <none>  <none>                         <none>\n" +
		"Events:\n" +
		"  Type     Reason    Age  From        Message\n" +
		"  ----     ------    ---  ----        -------\n" +
		"  Warning  Failover  60m  custody-dr  Failover from east to west (automatic: true)\n"
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
