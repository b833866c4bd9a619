package dr

import (
	"fmt"
	"testing"
	"time"
)

func TestInterval(t *testing.T) {
	for _, c := range []struct {
		in       string
		interval time.Duration
		schedule string
	}{
		{"5m", 5 * time.Minute, "*/5 * * * *"},
		{"59m", 59 * time.Minute, "*/59 * * * *"},
		{"1h", time.Hour, "0 */1 * * *"},
		{"23h", 23 * time.Hour, "0 */23 * * *"},
		{"1d", 24 * time.Hour, "0 0 */1 * *"},
		{"28d", 28 * 24 * time.Hour, "0 0 */28 * *"},
	} {
		got, err := Interval(c.in)
		if err != nil || got != c.interval {
			t.Errorf("Interval(%q) = %v, %v; want %v", c.in, got, err, c.interval)
		}
		s, err := Schedule(c.in)
		if err != nil || s != c.schedule {
			t.Errorf("Schedule(%q) = %q, %v; want %q", c.in, s, err, c.schedule)
		}
	}
	for _, bad := range []string{"", "m", "0m", "05m", "60m", "24h", "29d", "5s", "-5m", "+5m", "1.5h", "5"} {
		if _, err := Interval(bad); err == nil {
			t.Errorf("Interval(%q) took a bad interval", bad)
		}
		if _, err := Schedule(bad); err == nil {
			t.Errorf("Schedule(%q) took a bad interval", bad)
		}
	}
}

func TestDestination(t *testing.T) {
	targets := []string{"s1", "s2", "s3"}
	if got := Destination("ns", nil); got != "" {
		t.Errorf("no candidate gave %q", got)
	}
	counts := map[string]int{}
	moved := 0
	for i := range 300 {
		ns := fmt.Sprintf("ns-%d", i)
		d := Destination(ns, targets)
		counts[d]++
		if again := Destination(ns, []string{"s3", "s1", "s2"}); again != d {
			t.Fatalf("%s: the order of the candidates changed its destination from %s to %s", ns, d, again)
		}
		// Without s2, only the namespaces of s2 move.
		after := Destination(ns, []string{"s1", "s3"})
		if d != "s2" && after != d {
			t.Fatalf("%s moved from %s to %s though %s stayed", ns, d, after, d)
		}
		if d == "s2" {
			moved++
		}
	}
	for _, k := range targets {
		if counts[k] < 60 {
			t.Errorf("destinations are uneven: %v", counts)
		}
	}
	if moved != counts["s2"] {
		t.Errorf("%d namespaces moved, %d were on s2", moved, counts["s2"])
	}
}
