package dr

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// Interval parses a replication interval: a number of minutes (1-59), hours (1-23) or days
// (1-28), as "5m", "1h" or "1d".
func Interval(s string) (time.Duration, error) {
	n, unit, err := parseInterval(s)
	if err != nil {
		return 0, err
	}
	return time.Duration(n) * unit, nil
}

// Schedule is the cron schedule that syncs once per interval, as Ramen converts its
// scheduling interval: Nm runs every N minutes, Nh at minute 0 every N hours, Nd at
// midnight every N days.
func Schedule(s string) (string, error) {
	n, unit, err := parseInterval(s)
	if err != nil {
		return "", err
	}
	switch unit {
	case time.Minute:
		return fmt.Sprintf("*/%d * * * *", n), nil
	case time.Hour:
		return fmt.Sprintf("0 */%d * * *", n), nil
	default:
		return fmt.Sprintf("0 0 */%d * *", n), nil
	}
}

func parseInterval(s string) (int, time.Duration, error) {
	bad := fmt.Errorf("replication interval %q is not minutes (1-59), hours (1-23) or days (1-28), as 5m, 1h or 1d", s)
	if len(s) < 2 {
		return 0, 0, bad
	}
	n, err := strconv.Atoi(s[:len(s)-1])
	if err != nil || n < 1 || s[0] == '0' || s[0] == '+' {
		return 0, 0, bad
	}
	units := map[byte]struct {
		unit time.Duration
		max  int
	}{'m': {time.Minute, 59}, 'h': {time.Hour, 23}, 'd': {24 * time.Hour, 28}}
	u, ok := units[s[len(s)-1]]
	if !ok || n > u.max {
		return 0, 0, bad
	}
	return n, u.unit, nil
}

// Destination chooses, among the keys of the other Location's targets, the one that holds a
// namespace's replicas, by rendezvous hashing: the same target for every claim of the
// namespace, spread evenly. A pair keeps a namespace's destination while it stays a
// candidate (keptDestinations): a target added takes only namespaces new to the Location.
func Destination(namespace string, candidates []string) string {
	var best string
	var bestScore uint64
	for _, c := range candidates {
		h := fnv.New64a()
		_, _ = h.Write([]byte(namespace))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(c))
		if s := h.Sum64(); best == "" || s > bestScore || (s == bestScore && c < best) {
			best, bestScore = c, s
		}
	}
	return best
}
