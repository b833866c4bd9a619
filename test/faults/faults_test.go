//go:build faults

package faults

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	budget    = flag.Duration("budget", 10*time.Minute, "stop starting schedules after this long; 0 for no bound")
	keepGoing = flag.Bool("keep-going", false, "run every schedule even after one failed")
	steps     = flag.Bool("steps", false, "print every schedule's steps, not only a failing one's")
	keep      = flag.Bool("keep", false, "keep the logs even when every schedule passed")
	atOnce    = flag.Int("at-once", 6, "how many schedules run at once")
)

// TestFaults runs the regression schedules and a batch of schedules, seeds seed, seed+1, ...,
// on one bed, -at-once at a time, and fails with the seed, the steps and the replay command of every schedule
// that broke an invariant. With -seed it replays from that seed and skips the regressions.
func TestFaults(t *testing.T) {
	first := *seed
	batch := []Schedule{}
	if first == 0 {
		first = uint64(time.Now().UnixNano())
		batch = append(batch, regressions...)
	}
	for i := range *schedules {
		batch = append(batch, Draw(first+uint64(i), targets))
	}
	fmt.Printf("fault schedules: %d regressions, then %d from seed %d; replay one with: make faults SEED=<seed> N=1\n", len(batch)-*schedules, *schedules, first)
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
	bed, err := StartBed(ctx, filepath.Join(dir, "bed"))
	cancel()
	if err != nil {
		t.Fatalf("starting the bed: %v", err)
	}
	start := time.Now()
	var (
		mu        sync.Mutex
		converged []time.Duration
		failed    int
	)
	// report records and prints one schedule's result.
	report := func(res Result) {
		mu.Lock()
		defer mu.Unlock()
		s := res.Schedule
		converged = append(converged, res.Converged)
		if len(res.Violations) > 0 {
			failed++
			t.Errorf("%s\nas run:\n  %s\nviolations:\n  %s\nreplay: make faults SEED=%d N=1\nlogs: %s",
				s, strings.Join(res.Notes, "\n  "), strings.Join(res.Violations, "\n  "), s.Seed, logs.Name())
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
	next := make(chan Schedule)
	// pairFree holds a token while no pair schedule runs. Pair schedules run one at a time,
	// as a pair protects every namespace of its primary: one drawn while another runs is held
	// back, and the schedules after it go first, so that no worker waits.
	pairFree := make(chan struct{}, 1)
	pairFree <- struct{}{}
	go func() {
		defer close(next)
		var held []Schedule
		over := func() bool {
			if *budget > 0 && time.Since(start) > *budget {
				t.Logf("budget of %s spent", *budget)
				return true
			}
			mu.Lock()
			defer mu.Unlock()
			return failed > 0 && !*keepGoing
		}
		// pairGoes hands out the first pair schedule held back, if none runs.
		pairGoes := func() {
			if len(held) == 0 {
				return
			}
			select {
			case <-pairFree:
				next <- held[0]
				held = held[1:]
			default:
			}
		}
		for _, s := range batch {
			if over() {
				return
			}
			if s.paired() {
				held = append(held, s)
			} else {
				next <- s
			}
			pairGoes()
		}
		for ; len(held) > 0; held = held[1:] {
			<-pairFree
			if over() {
				return
			}
			next <- held[0]
		}
	}()
	var workers sync.WaitGroup
	for range max(1, *atOnce) {
		workers.Go(func() {
			for s := range next {
				report(bed.Run(context.Background(), s))
				if s.paired() {
					pairFree <- struct{}{}
				}
			}
		})
	}
	workers.Wait()
	ran := len(converged)
	if err := bed.Drained(context.Background()); err != nil {
		t.Errorf("liveness: %v", err)
	}
	took := time.Since(start)
	if err := bed.Stop(); err != nil {
		t.Errorf("stopping the bed: %v", err)
	}
	if left := bed.Leftovers(); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	fmt.Printf("%d schedules in %s (%.1f per minute), %d failed; time to settle after the last heal: %s\n",
		ran, took.Round(time.Second), float64(ran)/took.Minutes(), failed, distribution(converged))
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
