package config_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/custody-dev/custody/api"
	"github.com/custody-dev/custody/controllers"
)

// registrations records the collectors registered with controller-runtime's registry.
type registrations struct {
	prometheus.Registerer
	collectors []prometheus.Collector
}

func (r *registrations) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *registrations) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

// fqName reads a metric's name from its descriptor, which has no accessor for it.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// servedMetrics are the names of the metrics the controller serves, with their label names:
// what the hub controllers register with controller-runtime's registry when they are set up
// on a manager, as cmd/controller sets them up. The manager never starts (its REST mapper
// knows the scheme's kinds, so that no API server is asked). A histogram serves its name
// with _bucket, _sum and _count.
func servedMetrics(t *testing.T) map[string][]string {
	t.Helper()
	registered := &registrations{}
	saved := metrics.Registry
	metrics.Registry = struct {
		prometheus.Registerer
		prometheus.Gatherer
	}{registered, saved}
	defer func() { metrics.Registry = saved }()
	scheme := api.NewScheme()
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		MapperProvider: func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
			m := meta.NewDefaultRESTMapper(nil)
			for gvk := range scheme.AllKnownTypes() {
				m.Add(gvk, meta.RESTScopeRoot)
			}
			return m, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := controllers.Setup(mgr, controllers.Options{}); err != nil {
		t.Fatal(err)
	}
	served := map[string][]string{}
	for _, c := range registered.collectors {
		ch := make(chan *prometheus.Desc, 64)
		c.Describe(ch)
		close(ch)
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				t.Fatalf("no name in %s", d)
			}
			suffixes := []string{""}
			switch c.(type) {
			case prometheus.Histogram, *prometheus.HistogramVec:
				suffixes = []string{"_bucket", "_sum", "_count"}
			}
			for _, s := range suffixes {
				served[m[1]+s] = labelNames(d.String())
			}
		}
	}
	if len(served) == 0 {
		t.Fatal("the controllers registered no metric")
	}
	return served
}

var variableLabels = regexp.MustCompile(`variableLabels: \{([^}]*)\}`)

// labelNames reads a descriptor's variable labels.
func labelNames(desc string) []string {
	m := variableLabels.FindStringSubmatch(desc)
	if m == nil || m[1] == "" {
		return nil
	}
	return strings.Split(m[1], ",")
}

// render runs kustomize on an overlay of config/.
func render(t *testing.T, dir string) []map[string]any {
	t.Helper()
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("rendering config/%s: %v", dir, err)
	}
	var out []map[string]any
	for _, r := range res.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// ruleExpressions are the expressions of config/prometheus, as kustomize renders it, and the
// names its recording rules define.
func ruleExpressions(t *testing.T) (exprs map[string]string, recorded []string) {
	t.Helper()
	exprs = map[string]string{}
	for _, o := range render(t, "prometheus") {
		if o["kind"] != "PrometheusRule" {
			continue
		}
		data, _ := json.Marshal(o["spec"])
		var spec struct {
			Groups []struct {
				Name  string `json:"name"`
				Rules []rule `json:"rules"`
			} `json:"groups"`
		}
		if err := json.Unmarshal(data, &spec); err != nil {
			t.Fatal(err)
		}
		for _, g := range spec.Groups {
			for i, r := range g.Rules {
				exprs[fmt.Sprintf("group %s, rule %d (%s%s)", g.Name, i, r.Alert, r.Record)] = r.Expr
				if r.Record != "" {
					recorded = append(recorded, r.Record)
				}
			}
		}
	}
	if len(exprs) == 0 {
		t.Fatal("config/prometheus renders no rule")
	}
	return exprs, recorded
}

// dashboardQueries are the queries of config/grafana's dashboard, as kustomize renders it
// into its ConfigMap, by panel title, and of its template variables.
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	queries := map[string]string{}
	for _, o := range render(t, "grafana") {
		if o["kind"] != "ConfigMap" {
			continue
		}
		data, _ := o["data"].(map[string]any)
		var dash struct {
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
			Templating struct {
				List []struct {
					Name       string `json:"name"`
					Definition string `json:"definition"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal([]byte(data["custody.json"].(string)), &dash); err != nil {
			t.Fatalf("custody.json: %v", err)
		}
		for _, p := range dash.Panels {
			for i, q := range p.Targets {
				queries[fmt.Sprintf("panel %q, query %d", p.Title, i)] = q.Expr
			}
		}
		for _, v := range dash.Templating.List {
			if v.Definition != "" {
				queries["variable "+v.Name] = v.Definition
			}
		}
	}
	if len(queries) == 0 {
		t.Fatal("config/grafana renders no dashboard query")
	}
	return queries
}

// TestQueriesNameServedMetrics checks that every metric and label that the alerts and the
// dashboard query is one the controller serves (or a recording rule of the alerts defines):
// a renamed metric or a typo would otherwise leave an alert that never fires and an empty
// panel.
func TestQueriesNameServedMetrics(t *testing.T) {
	served := servedMetrics(t)
	exprs, recorded := ruleExpressions(t)
	queries := dashboardQueries(t)
	for _, r := range recorded {
		served[r] = nil
	}
	for where, set := range map[string]map[string]string{"config/prometheus": exprs, "config/grafana": queries} {
		for name, q := range set {
			selectors := metricSelectors(q)
			if len(selectors) == 0 {
				t.Errorf("%s, %s: no metric in %q", where, name, q)
			}
			for _, s := range selectors {
				labels, ok := served[s.metric]
				if !ok {
					t.Errorf("%s, %s: the controller serves no metric %s", where, name, s.metric)
					continue
				}
				for _, l := range s.labels {
					if !slices.Contains(labels, l) && !slices.Contains(recorded, s.metric) {
						t.Errorf("%s, %s: metric %s has no label %s (it has %v)", where, name, s.metric, l, labels)
					}
				}
			}
		}
	}
}
