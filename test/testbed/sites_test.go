package testbed

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// TestHubAcrossSitesServesThroughTheLossOfASite starts a hub across three sites and loses
// its first site, the one whose API server its clients reach first: the hub goes on serving
// through the other site's API server over the etcd members that keep a quorum, the other
// site's kube-controller-manager takes the lead and finalizes a deleted namespace, and the
// site, started again, serves what was written while it was lost.
func TestHubAcrossSitesServesThroughTheLossOfASite(t *testing.T) {
	logf.SetLogger(logr.Discard())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bed, err := Start(ctx, Options{HubSites: 3, NoNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := bed.Stop(); err != nil {
			t.Error(err)
		}
	}()
	hub := bed.Hub
	if got := hub.Sites(); !slices.Equal(got, []string{"site-1", "site-2", Witness}) {
		t.Fatalf("sites %v", got)
	}
	if len(hub.Servers()) != 2 {
		t.Fatalf("API servers %v, want one in each main site", hub.Servers())
	}
	write := func(name string) time.Duration {
		start := time.Now()
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		for {
			err := hub.Client.Create(ctx, cm)
			if err == nil {
				return time.Since(start)
			}
			if ctx.Err() != nil {
				t.Fatalf("writing %s: %v", name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	write("before")

	if err := hub.StopSite("site-1"); err != nil {
		t.Fatal(err)
	}
	if err := hub.StopSite("site-1"); err == nil {
		t.Error("a site down already was stopped again")
	}
	t.Logf("with site-1 lost, the hub took a write after %s", write("while-lost").Round(time.Millisecond))
	if hub.LiveKubeconfig() == hub.Kubeconfig {
		t.Error("with site-1 lost, the live kubeconfig is still site-1's")
	}

	// The namespace controller of site-2 finalizes a deleted namespace once it leads.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "deleted-while-lost"}}
	if err := hub.Client.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := hub.Client.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for !apierrors.IsNotFound(hub.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns)) {
		if ctx.Err() != nil {
			t.Fatalf("namespace %s still there: %+v", ns.Name, ns.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("a namespace deleted while site-1 was lost was gone after %s", time.Since(start).Round(time.Millisecond))

	if err := hub.StartSite(ctx, "site-1"); err != nil {
		t.Fatal(err)
	}
	siteOne, err := client.New(hub.SiteConfig("site-1"), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := siteOne.Get(ctx, client.ObjectKey{Namespace: "default", Name: "while-lost"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("site-1, back, does not serve what was written while it was lost: %v", err)
	}

	// Losing the witness alone keeps a quorum too.
	if err := hub.StopSite(Witness); err != nil {
		t.Fatal(err)
	}
	t.Logf("with the witness lost, the hub took a write after %s", write("witness-lost").Round(time.Millisecond))
	if err := hub.StartSite(ctx, Witness); err != nil {
		t.Fatal(err)
	}
	if err := hub.StopAPIServer(); err == nil {
		t.Error("a hub across sites stopped one API server alone")
	}
}

func TestHubSitesAreOneOrAnOddNumberFromThree(t *testing.T) {
	for n, ok := range map[int]bool{0: true, 1: true, 2: false, 3: true, 4: false, 5: true} {
		if err := checkHubSites(n); (err == nil) != ok {
			t.Errorf("%d sites: %v", n, err)
		}
	}
	if got := HubSiteNames(5); !slices.Equal(got, []string{"site-1", "site-2", "site-3", "site-4", Witness}) {
		t.Errorf("5 sites: %v", got)
	}
}
