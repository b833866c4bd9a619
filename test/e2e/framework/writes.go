package framework

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"

	"github.com/custody-dev/custody/test/testbed"
)

// WriteCounts are the write requests the clusters' API servers served, by cluster, verb,
// resource and response code. The benchmarks count what an operation cost with them.
type WriteCounts map[string]int

// Writes reads the clusters' write counts from their API servers' metrics, heartbeat Leases
// and events left out.
func Writes(ctx context.Context, tb testing.TB, clusters []*testbed.Cluster) WriteCounts {
	return countWrites(ctx, tb, clusters, false)
}

// AllWrites reads the clusters' write counts, heartbeat Leases and events counted.
func AllWrites(ctx context.Context, tb testing.TB, clusters []*testbed.Cluster) WriteCounts {
	return countWrites(ctx, tb, clusters, true)
}

// countWrites reads the clusters' write counts from their API servers' metrics, Leases and
// events only when all.
func countWrites(ctx context.Context, tb testing.TB, clusters []*testbed.Cluster, all bool) WriteCounts {
	tb.Helper()
	out := WriteCounts{}
	for _, cl := range clusters {
		cs, err := kubernetes.NewForConfig(cl.Config)
		if err != nil {
			tb.Fatal(err)
		}
		raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		addWrites(out, cl.Name, string(raw), all)
	}
	return out
}

var writeVerbs = []string{"POST", "PUT", "PATCH", "APPLY", "DELETE"}

// addWrites adds the write counts of one cluster's metrics to out, those of Leases and
// events only when all.
func addWrites(out WriteCounts, cluster, metrics string, all bool) {
	sc := bufio.NewScanner(strings.NewReader(metrics))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, found := strings.CutPrefix(sc.Text(), "apiserver_request_total{")
		labels, value, ok := strings.Cut(rest, "} ")
		if !found || !ok {
			continue
		}
		l := map[string]string{}
		for _, kv := range strings.Split(labels, ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				l[k] = strings.Trim(v, `"`)
			}
		}
		if !all && (l["resource"] == "leases" || l["resource"] == "events") || !slices.Contains(writeVerbs, l["verb"]) {
			continue
		}
		resource := l["resource"]
		if l["subresource"] != "" {
			resource += "/" + l["subresource"]
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[fmt.Sprintf("%s %s %s %s", cluster, l["verb"], resource, l["code"])] += int(v)
		}
	}
}

// Total is the number of writes.
func (w WriteCounts) Total() int {
	total := 0
	for _, n := range w {
		total += n
	}
	return total
}

// Since is what was written after before was read.
func (w WriteCounts) Since(before WriteCounts) WriteCounts {
	out := WriteCounts{}
	for k, n := range w {
		if d := n - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// PerVolume tells, most first, how many writes of each kind each of n volumes cost.
func (w WriteCounts) PerVolume(n int) string {
	keys := slices.SortedFunc(maps.Keys(w), func(a, b string) int { return w[b] - w[a] })
	lines := make([]string, 0, len(keys))
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("  %5.2f  %s", float64(w[k])/float64(n), k))
	}
	return strings.Join(lines, "\n")
}
