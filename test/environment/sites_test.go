package environment

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/test/testbed"
)

// TestHubAcrossSitesLosesTheLeadersSite runs Custody on a hub across three sites, a Location
// in each main site, and loses site-1, where the controller's leader and the first API server
// run: the replica of site-2 takes the lead once the leader's Lease expires, the member of
// site-2, whose syncer reached the hub through site-1, goes on heartbeating through site-2 and
// stays Ready, and the member of site-1 is found Unreachable. Site-1 back, its member is Ready
// again.
func TestHubAcrossSitesLosesTheLeadersSite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	e, _ := startReady(ctx, t, Options{HubSites: 3, NoNodes: true, Locations: []LocationOptions{
		{Name: "east", Domain: "east", Members: []string{"m1"}, Site: "site-1"},
		{Name: "west", Domain: "west", Members: []string{"m2"}, Site: "site-2"},
	}})
	leader, _, err := e.ControllerLeader(ctx)
	if err != nil || leader == "" {
		t.Fatalf("no controller leads: %q, %v", leader, err)
	}
	s, code := hubStatus(ctx, t, e)
	if code != 0 || !s.Etcd.Quorum || s.Etcd.Healthy != 3 || len(s.APIServers) != 2 || !s.APIServers[0].Ready || !s.APIServers[1].Ready ||
		s.Controller.Holder != leader {
		t.Errorf("kubectl custody hub status of a whole hub: exit %d, %+v", code, s)
	}

	lost := time.Now()
	if err := e.StopSite("site-1"); err != nil {
		t.Fatal(err)
	}
	var handedOver, detected time.Duration
	for handedOver == 0 || detected == 0 {
		if ctx.Err() != nil {
			t.Fatalf("after losing site-1: the lead handed over after %s, m1 found lost after %s (0: not yet)", handedOver, detected)
		}
		time.Sleep(100 * time.Millisecond)
		if holder, _, err := e.ControllerLeader(ctx); handedOver == 0 && err == nil && holder != "" && holder != leader {
			handedOver = time.Since(lost)
		}
		m1, m2 := target(ctx, t, e, "m1"), target(ctx, t, e, "m2")
		if detected == 0 && !m1.IsReady() {
			detected = time.Since(lost)
			if !m2.IsReady() {
				t.Fatalf("m2, of the site that is up, is not Ready either: %+v", m2.Status.Conditions)
			}
		}
	}
	renewal := &coordinationv1.Lease{}
	if err := e.Hub.Client.Get(ctx, client.ObjectKey{Namespace: workloadv1alpha1.HeartbeatNamespace, Name: "m2"}, renewal); err != nil {
		t.Fatal(err)
	}
	if !renewal.Spec.RenewTime.After(lost.Add(2 * time.Second)) {
		t.Errorf("m2's syncer last renewed its heartbeat at %s, before site-1 was lost at %s: it did not go on through site-2", renewal.Spec.RenewTime, lost)
	}
	t.Logf("site-1 lost: the lead handed over after %s, m1 found Unreachable after %s, m2 Ready throughout",
		handedOver.Round(time.Millisecond), detected.Round(time.Millisecond))
	s, code = hubStatus(ctx, t, e)
	if code != 0 || !s.Etcd.Quorum || s.Etcd.Healthy != 2 || s.APIServers[0].Ready || !s.APIServers[1].Ready ||
		!s.Controller.Leading || s.Controller.Holder == leader {
		t.Errorf("kubectl custody hub status without site-1: exit %d, %+v", code, s)
	}

	back := time.Now()
	if err := e.StartSite(ctx, "site-1"); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("site-1 back: every target Ready after %s", time.Since(back).Round(time.Millisecond))
	if e.Hub.SiteDown("site-1") || e.Hub.SiteDown(testbed.Witness) {
		t.Error("a site is still down")
	}
}

// target reads the named SyncTarget.
func target(ctx context.Context, t *testing.T, e *Environment, name string) *workloadv1alpha1.SyncTarget {
	t.Helper()
	st := &workloadv1alpha1.SyncTarget{}
	if err := e.Hub.Client.Get(ctx, client.ObjectKey{Name: name}, st); err != nil {
		t.Fatal(err)
	}
	return st
}

// status is what kubectl custody hub status -o json says of a hub across sites.
type status struct {
	Etcd struct {
		Healthy int  `json:"healthy"`
		Quorum  bool `json:"quorum"`
	} `json:"etcd"`
	APIServers []struct {
		Ready bool `json:"ready"`
	} `json:"apiServers"`
	Controller struct {
		Leading bool   `json:"leading"`
		Holder  string `json:"holder"`
	} `json:"controller"`
}

// hubStatus runs kubectl custody hub status on the environment's hub, naming every API server
// and the etcd member of site-2, and returns what it said and its exit code.
func hubStatus(ctx context.Context, t *testing.T, e *Environment) (status, int) {
	t.Helper()
	code, out, errOut := e.Custody(ctx, "hub", "status", "-o", "json", "--server", strings.Join(e.Hub.Servers(), ","),
		"--etcd-endpoint", e.Hub.EtcdEndpoints()[1])
	var s status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("hub status printed %q (%v), stderr %q", out, err, errOut)
	}
	t.Logf("kubectl custody hub status: exit %d %s", code, errOut)
	return s, code
}
