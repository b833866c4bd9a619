package config_test

import (
	"reflect"
	"strings"
	"testing"
)

// selector is a metric a PromQL query selects, with the labels its matchers name.
type selector struct {
	metric string
	labels []string
}

// promqlKeywords are the words of PromQL that are neither metrics nor functions.
var promqlKeywords = map[string]bool{
	"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true,
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"inf": true, "nan": true, "Inf": true, "NaN": true,
	// Aggregations, whose grouping may stand between the name and the parenthesis.
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
}

// groupingKeywords are followed by a list of label names in parentheses.
var groupingKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// metricSelectors finds the metrics a PromQL query selects (or a Grafana label_values
// query names): every name that is not a function, keyword, label or literal. It is a lexer,
// not a parser, and enough for queries that select metrics by name, as Custody's do.
func metricSelectors(q string) []selector {
	var out []selector
	i := 0
	skipSpace := func() {
		for i < len(q) && strings.ContainsRune(" \t\n\r", rune(q[i])) {
			i++
		}
	}
	ident := func() string {
		start := i
		for i < len(q) && (isIdentStart(q[i]) || q[i] >= '0' && q[i] <= '9') {
			i++
		}
		return q[start:i]
	}
	skipPast := func(end byte) {
		for i < len(q) && q[i] != end {
			if isQuote(q[i]) {
				skipString(q, &i)
				continue
			}
			i++
		}
		i++
	}
	// labels reads the label names of the list that starts at i ("{...}" or "(...)").
	labels := func(end byte) []string {
		var names []string
		i++
		for i < len(q) && q[i] != end {
			switch c := q[i]; {
			case isQuote(c):
				skipString(q, &i)
			case isIdentStart(c):
				names = append(names, ident())
			default:
				i++
			}
		}
		i++
		return names
	}
	for i < len(q) {
		c := q[i]
		switch {
		case isQuote(c):
			skipString(q, &i)
		case c == '[':
			skipPast(']')
		case c == '$':
			i++
			if i < len(q) && q[i] == '{' {
				skipPast('}')
			} else {
				ident()
			}
		case c >= '0' && c <= '9' || c == '.':
			for i < len(q) && (q[i] >= '0' && q[i] <= '9' || q[i] == '.' || isIdentStart(q[i])) {
				i++
			}
		case isIdentStart(c):
			name := ident()
			skipSpace()
			next := byte(0)
			if i < len(q) {
				next = q[i]
			}
			switch {
			case groupingKeywords[name] && next == '(':
				labels(')')
			case promqlKeywords[name]:
			case name == "label_values" && next == '(':
				args := labels(')')
				if len(args) > 0 {
					out = append(out, selector{metric: args[0], labels: args[1:]})
				}
			case next == '(':
				// A function or an aggregation: its arguments are read as they come.
			case next == '{':
				out = append(out, selector{metric: name, labels: labels('}')})
			default:
				out = append(out, selector{metric: name})
			}
		case c == '{':
			// A selector without a metric name selects by labels alone: none of ours does.
			out = append(out, selector{labels: labels('}')})
		default:
			i++
		}
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

// skipString moves *i past the string literal that starts there.
func skipString(q string, i *int) {
	quote := q[*i]
	for *i++; *i < len(q) && q[*i] != quote; *i++ {
		if q[*i] == '\\' {
			*i++
		}
	}
	*i++
}

func TestMetricSelectors(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  []selector
	}{
		{query: `custody_volumes`, want: []selector{{metric: "custody_volumes"}}},
		{query: `max by (phase) (custody_volumes{class="Owned", phase!~"Bound|Moving"})`,
			want: []selector{{metric: "custody_volumes", labels: []string{"class", "phase"}}}},
		{query: `histogram_quantile(0.95, sum by (le) (rate(custody_fence_duration_seconds_bucket{x=~"$pair"}[$__rate_interval])))`,
			want: []selector{{metric: "custody_fence_duration_seconds_bucket", labels: []string{"x"}}}},
		{query: "time() - min by (owner) (custody_volume_moving_since_timestamp_seconds) > 15 * 60",
			want: []selector{{metric: "custody_volume_moving_since_timestamp_seconds"}}},
		{query: `a:b:c > 2 <= 3 and on (pair) group_left () max without (job) (custdy_typo{s="}"}) == 1 offset 5m`,
			want: []selector{{metric: "a:b:c"}, {metric: "custdy_typo", labels: []string{"s"}}}},
		{query: `label_values(custody_pair_phase, pair)`, want: []selector{{metric: "custody_pair_phase", labels: []string{"pair"}}}},
		{query: `{__name__="x"}`, want: []selector{{labels: []string{"__name__"}}}},
	} {
		if got := metricSelectors(tt.query); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("metricSelectors(%q) = %+v, want %+v", tt.query, got, tt.want)
		}
	}
}
