package faults

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestDrawIsTheSameForASeed(t *testing.T) {
	for seed := range uint64(200) {
		a, b := Draw(seed, targets, nil), Draw(seed, targets, nil)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d drew two schedules:\n%s\n%s", seed, a, b)
		}
	}
	if reflect.DeepEqual(Draw(1, targets, nil), Draw(2, targets, nil)) {
		t.Fatal("seeds 1 and 2 drew the same schedule")
	}
}

// Draw's schedules are ordered, start with claims, keep the steps on one resource apart,
// and give every fault a heal.
func TestDrawnSchedulesAreWellFormed(t *testing.T) {
	kinds := map[Kind]int{}
	for seed := range uint64(2000) {
		s := Draw(seed, targets, nil)
		if s.Steps[0].Kind != CreateClaim {
			t.Fatalf("seed %d starts with %s", seed, s.Steps[0])
		}
		busy := map[string]time.Duration{}
		for i, st := range s.Steps {
			kinds[st.Kind]++
			if i > 0 && st.At < s.Steps[i-1].At {
				t.Fatalf("seed %d: %s before %s", seed, st, s.Steps[i-1])
			}
			if st.At > 0 && st.Kind == CreateClaim {
				t.Fatalf("seed %d: a claim created late: %s", seed, st)
			}
			if res := st.resource(); res != "" {
				if st.At < busy[res] {
					t.Fatalf("seed %d: %s overlaps an earlier step on %s", seed, st, res)
				}
				busy[res] = st.At + st.For
			}
			if !st.workload() && !st.heals() {
				t.Fatalf("seed %d: %s never heals", seed, st)
			}
		}
	}
	for _, k := range append(faultKinds, CreateClaim, CreateStatefulSet, Cordon, Keep, DeleteClaim, Protect, LosePrimary) {
		if kinds[k] == 0 {
			t.Errorf("2000 schedules never drew %s", k)
		}
	}
}

// On a hub across sites, a lost site is drawn where a restarted hub would be, at each site.
func TestAHubAcrossSitesLosesASiteInsteadOfRestarting(t *testing.T) {
	sites := []string{"site-1", "site-2", "witness"}
	lost := map[string]int{}
	for seed := range uint64(2000) {
		for _, st := range Draw(seed, targets, sites).Steps {
			switch st.Kind {
			case RestartHub:
				t.Fatalf("seed %d restarts a hub across sites: %s", seed, st)
			case LoseHubSite:
				if !slices.Contains(sites, st.Site) || st.For < 3*time.Second {
					t.Fatalf("seed %d: %s", seed, st)
				}
				lost[st.Site]++
			}
		}
	}
	if len(lost) != len(sites) {
		t.Errorf("2000 schedules lost only %v", lost)
	}
}

func TestStepsReadAsTheyRun(t *testing.T) {
	for _, tc := range []struct {
		step Step
		want string
	}{
		{Step{Kind: CreateClaim, Name: "c1", Mode: "ReadWriteOnce"}, "+ 0.00s create-claim c1 ReadWriteOnce"},
		{Step{At: 1250 * time.Millisecond, Kind: StopMember, Target: Owner, For: 2 * time.Second}, "+ 1.25s stop-member owner for 2s"},
		{Step{At: 300 * time.Millisecond, Kind: SlowStorage, Delay: 200 * time.Millisecond, For: time.Second}, "+ 0.30s slow-storage by 200ms for 1s"},
		{Step{Kind: CreateStatefulSet, Name: "db", Replicas: 2}, "+ 0.00s create-statefulset db replicas=2"},
		{Step{At: 2 * time.Second, Kind: LoseHubSite, Site: "site-1", For: 12 * time.Second}, "+ 2.00s lose-hub-site site-1 for 12s"},
	} {
		if got := tc.step.String(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
