//go:build faults

package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/testbed"
)

var (
	schedules = flag.Int("n", 100, "how many schedules to run")
	seed      = flag.Uint64("seed", 0, "the first schedule's seed; 0 draws one from the clock")
	budget    = flag.Duration("budget", 9*time.Minute, "stop starting schedules after this long, pair schedules 3 minutes sooner; 0 for no bound")
	keepGoing = flag.Bool("keep-going", false, "run every schedule even after one failed")
	steps     = flag.Bool("steps", false, "print every schedule's steps, not only a failing one's")
	keep      = flag.Bool("keep", false, "keep the logs even when every schedule passed")
	atOnce    = flag.Int("at-once", 8, "how many schedules run at once")
	noNodes   = flag.Bool("no-nodes", false, "start the members without nodes, so that their pods stay Pending (testbed.Options.NoNodes)")
	hubSites  = flag.Int("hub-sites", 1, "span the bed's hub across that many sites (3: two main sites and a witness); lose-hub-site is then drawn where restart-hub would be")
)

// pairAllowance is how much sooner than the others pair schedules stop starting: about the
// longest one takes.
const pairAllowance = 3 * time.Minute

// queue is a list of schedules workers take from, and how much sooner than the budget's
// end they stop starting.
type queue struct {
	name      string
	list      []Schedule
	allowance time.Duration
}

// TestFaults runs the regression schedules and a batch of schedules, seeds seed, seed+1, ...,
// on one bed, -at-once at a time, and fails with the seed, the steps and the replay command of every schedule
// that broke an invariant. With -seed it replays from that seed and skips the regressions.
func TestFaults(t *testing.T) {
	first := *seed
	batch := []Schedule{}
	var sites []string
	if *hubSites > 1 {
		sites = testbed.HubSiteNames(*hubSites)
	}
	if first == 0 {
		first = uint64(time.Now().UnixNano())
		if sites == nil { // they were drawn on a hub of one site, and restart it
			batch = append(batch, regressions...)
		}
	}
	for i := range *schedules {
		batch = append(batch, Draw(first+uint64(i), targets, sites))
	}
	fmt.Printf("fault schedules: %d regressions, then %d from seed %d; replay one with: %s\n", len(batch)-*schedules, *schedules, first, replay("<seed>"))
	dir, err := os.MkdirTemp("", "custody-faults-")
	if err != nil {
		t.Fatal(err)
	}
	logs, err := os.Create(filepath.Join(dir, "custody.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(logs), zap.UseDevMode(true), zap.Level(zapcore.InfoLevel)))

	ctx, cancel := context.WithTimeout(context.Background(), testbed.StartTimeout)
	bedStart := time.Now()
	bed, err := StartBed(ctx, filepath.Join(dir, "bed"), !*noNodes, *hubSites)
	cancel()
	if err != nil {
		t.Fatalf("starting the bed: %v", err)
	}
	start := time.Now()
	fmt.Printf("the bed started in %s\n", start.Sub(bedStart).Round(100*time.Millisecond))
	var (
		mu        sync.Mutex
		converged []time.Duration
		failed    int
		// failures are the failed schedules, a line each, repeated at the end of the output,
		// where a truncated log still shows them.
		failures []string
		// lostSites counts the schedules run that lost a hub site.
		lostSites int
	)
	// report records and prints one schedule's result.
	report := func(res Result) {
		mu.Lock()
		defer mu.Unlock()
		s := res.Schedule
		converged = append(converged, res.Converged)
		if slices.ContainsFunc(s.Steps, func(st Step) bool { return st.Kind == LoseHubSite }) {
			lostSites++
		}
		if len(res.Violations) > 0 {
			failed++
			n := strconv.FormatUint(s.Seed, 10)
			failures = append(failures, fmt.Sprintf("schedule %s (%s): %s", n, replay(n), res.Violations[0]))
			t.Errorf("%s\nas run:\n  %s\nviolations:\n  %s\nreplay: %s\nlogs: %s",
				s, strings.Join(res.Notes, "\n  "), strings.Join(res.Violations, "\n  "), replay(n), logs.Name())
		}
		if *steps {
			fmt.Printf("%s\n  %s\n", s, strings.Join(res.Notes, "\n  "))
		}
		if testing.Verbose() {
			failover := ""
			if res.Failover != "" {
				failover = ", failover " + res.Failover
			}
			fmt.Printf("schedule %d: %d steps, %d writes acknowledged (tries that wrote nothing: %v)%s, settled %s after the last heal, cleaned up in %s, took %s\n",
				s.Seed, len(s.Steps), res.Writes, res.Unwritten, failover, res.Converged.Round(time.Millisecond), res.CleanedUp.Round(time.Millisecond), res.Took.Round(time.Millisecond))
		}
	}
	// Pair schedules run one at a time, as a pair protects every namespace of its primary,
	// and each takes minutes: one worker runs them first, from the start of the batch, and
	// then helps with the others. A schedule starts only while the budget lasts, a pair
	// schedule only until three minutes before its end, so that the batch ends close to it.
	pairs := &queue{name: "pair schedules", allowance: pairAllowance,
		list: slices.DeleteFunc(slices.Clone(batch), func(s Schedule) bool { return !s.paired() })}
	others := &queue{name: "other schedules", list: slices.DeleteFunc(slices.Clone(batch), Schedule.paired)}
	take := func(q *queue) (Schedule, bool) {
		mu.Lock()
		defer mu.Unlock()
		why := ""
		switch {
		case len(q.list) == 0:
			return Schedule{}, false
		case *budget > 0 && time.Since(start) > *budget-q.allowance:
			why = fmt.Sprintf("%s of the budget of %s spent", time.Since(start).Round(time.Second), *budget)
		case failed > 0 && !*keepGoing:
			why = "a schedule failed"
		}
		if why != "" {
			t.Logf("%s: %d %s not run", why, len(q.list), q.name)
			q.list = nil
			return Schedule{}, false
		}
		s := q.list[0]
		q.list = q.list[1:]
		return s, true
	}
	run := func(q *queue) {
		for s, ok := take(q); ok; s, ok = take(q) {
			report(bed.Run(context.Background(), s))
		}
	}
	var workers sync.WaitGroup
	workers.Go(func() {
		run(pairs)
		run(others)
	})
	for range max(1, *atOnce) - 1 {
		workers.Go(func() { run(others) })
	}
	workers.Wait()
	ran := len(converged)
	if err := bed.Drained(context.Background()); err != nil {
		t.Errorf("liveness: %v", err)
	}
	took := time.Since(start)
	peak := bed.PeakMemory()
	if err := bed.Stop(); err != nil {
		t.Errorf("stopping the bed: %v", err)
	}
	if left := bed.Leftovers(); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	fmt.Printf("%d schedules in %s (%.1f per minute), %d failed; time to settle after the last heal: %s; the bed's processes at their peak: %d MiB\n",
		ran, took.Round(time.Second), float64(ran)/took.Minutes(), failed, distribution(converged), peak>>20)
	if sites != nil {
		fmt.Printf("on a hub across %d sites: %d of the schedules lost a hub site\n", len(sites), lostSites)
	}
	for _, f := range failures {
		fmt.Printf("failed: %s\n", f)
	}
	if t.Failed() || *keep {
		fmt.Printf("logs: %s\n", dir)
	} else {
		_ = os.RemoveAll(dir)
	}
}

// distribution gives the median, the 90th and 99th percentiles and the maximum.
func distribution(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))].Round(time.Millisecond) }
	return fmt.Sprintf("median %s, p90 %s, p99 %s, max %s", at(0.5), at(0.9), at(0.99), s[len(s)-1].Round(time.Millisecond))
}

// replay is the command that runs the schedule of the seed again, on a hub of as many sites.
func replay(seed string) string {
	if *hubSites > 1 {
		return fmt.Sprintf("make faults SEED=%s N=1 HUB_SITES=%d", seed, *hubSites)
	}
	return fmt.Sprintf("make faults SEED=%s N=1", seed)
}
