package cachemetrics

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var (
	phaseDesc = prometheus.NewDesc("test_phase", "Phase.", []string{"name", "phase"}, nil)
	sinceDesc = prometheus.NewDesc("test_since_timestamp_seconds", "Since.", []string{"name"}, nil)
)

// reader is a client.Reader whose lists fail with err; the collect function under test reads
// nothing else of it.
type reader struct {
	client.Reader
	err error
}

func TestCollector(t *testing.T) {
	c := New("test", func(_ context.Context, r client.Reader, ch chan<- prometheus.Metric) error {
		if r.(*reader).err != nil {
			return r.(*reader).err
		}
		OneOf(ch, phaseDesc, []string{"A", "B", "C"}, "B", "x")
		ch <- Timestamp(sinceDesc, time.Unix(1500, 500_000_000), "x")
		return nil
	}, phaseDesc, sinceDesc)
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("before Register, %d metrics; want none", n)
	}
	c.reader = &reader{}
	want := `
# HELP test_phase Phase.
# TYPE test_phase gauge
test_phase{name="x",phase="A"} 0
test_phase{name="x",phase="B"} 1
test_phase{name="x",phase="C"} 0
# HELP test_since_timestamp_seconds Since.
# TYPE test_since_timestamp_seconds gauge
test_since_timestamp_seconds{name="x"} 1500.5
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	c.reader = &reader{err: errors.New("cache not synced")}
	if n := testutil.CollectAndCount(c); n != 0 {
		t.Errorf("after a failed list, %d metrics; want none", n)
	}
}

func TestReleaseLetsGoOfOnlyTheLastManagersCache(t *testing.T) {
	c := New("test", func(context.Context, client.Reader, chan<- prometheus.Metric) error { return nil })
	c.reader, c.managers = &reader{}, 2
	stopped, stop := context.WithCancel(context.Background())
	stop()
	if err := (release{c: c, manager: 1}).Start(stopped); err != nil || c.reader == nil {
		t.Fatalf("an earlier manager stopping: err %v, reader %v; want the cache of the one that runs kept", err, c.reader)
	}
	if err := (release{c: c, manager: 2}).Start(stopped); err != nil || c.reader != nil {
		t.Fatalf("the last manager stopping: err %v, reader %v; want its cache let go", err, c.reader)
	}
}
