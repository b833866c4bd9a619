package config_test

import (
	"testing"
)

// TestSitesRunsAControllerReplicaInEachMainSite renders config/sites: config/default's
// objects, with the controller's two replicas spread over the sites.
func TestSitesRunsAControllerReplicaInEachMainSite(t *testing.T) {
	sites, def := render(t, "sites"), render(t, "default")
	if len(sites) != len(def) {
		t.Fatalf("config/sites holds %d objects, config/default %d", len(sites), len(def))
	}
	for _, o := range sites {
		if o["kind"] != "Deployment" {
			continue
		}
		spec := o["spec"].(map[string]any)
		if spec["replicas"] != 2 {
			t.Errorf("replicas %v, want one in each main site", spec["replicas"])
		}
		pod := spec["template"].(map[string]any)["spec"].(map[string]any)
		spread, _ := pod["topologySpreadConstraints"].([]any)
		if len(spread) != 1 || spread[0].(map[string]any)["topologyKey"] != "topology.kubernetes.io/zone" ||
			spread[0].(map[string]any)["whenUnsatisfiable"] != "DoNotSchedule" {
			t.Errorf("the replicas are not kept to a site each: %v", spread)
		}
		if containers := pod["containers"].([]any); len(containers) != 1 {
			t.Errorf("the patch lost the controller's container: %v", containers)
		}
		return
	}
	t.Fatal("config/sites runs no controller")
}
