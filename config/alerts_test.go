package config_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/custody-dev/custody/test/testbed"
)

// rule is the part of a PrometheusRule's rules that the tests read.
type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	Annotations map[string]string `json:"annotations"`
}

// prometheusRule reads config/prometheus/alerts.yaml: its rule groups as written, to hand to
// promtool, and its rules.
func prometheusRule(t *testing.T) (groups any, rules []rule) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("prometheus", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Kind string `json:"kind"`
		Spec struct {
			Groups any `json:"groups"`
		} `json:"spec"`
	}
	var typed struct {
		Spec struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	for _, into := range []any{&raw, &typed} {
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatal(err)
		}
	}
	if raw.Kind != "PrometheusRule" {
		t.Fatalf("config/prometheus/alerts.yaml is a %q, not a PrometheusRule", raw.Kind)
	}
	for _, g := range typed.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	return raw.Spec.Groups, rules
}

// TestAlertRules checks the rules with promtool and runs their unit tests,
// config/prometheus/alerts_test.yaml. promtool is pinned in hack/tools/prometheus and built
// into bin/ by hack/tools.sh, as the control plane is: a missing promtool fails the test.
func TestAlertRules(t *testing.T) {
	bin, err := testbed.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	promtool := filepath.Join(bin, "promtool")
	groups, _ := prometheusRule(t)
	rules, err := yaml.Marshal(map[string]any{"groups": groups})
	if err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("prometheus", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{"alerts.rules.yaml": rules, "alerts_test.yaml": tests} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"check", "rules", "--lint-fatal", "alerts.rules.yaml"},
		{"test", "rules", "alerts_test.yaml"},
	} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestAlertsTestedAndDocumented keeps every alert tested both ways and documented: the unit
// tests expect it to fire at one time and to stay quiet at another, and docs/alerts.md has
// the runbook its runbook_url names.
func TestAlertsTestedAndDocumented(t *testing.T) {
	_, rules := prometheusRule(t)
	data, err := os.ReadFile(filepath.Join("prometheus", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tests struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(data, &tests); err != nil {
		t.Fatal(err)
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tg := range tests.Tests {
		for _, at := range tg.AlertRuleTest {
			if len(at.ExpAlerts) > 0 {
				fires[at.Alertname] = true
			} else {
				quiet[at.Alertname] = true
			}
		}
	}
	runbooks, err := os.ReadFile(filepath.Join("..", "docs", "alerts.md"))
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, line := range strings.Split(string(runbooks), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[h] = true
		}
	}
	var alerts []string
	for _, r := range rules {
		if r.Alert == "" || slices.Contains(alerts, r.Alert) {
			continue
		}
		alerts = append(alerts, r.Alert)
		if !fires[r.Alert] || !quiet[r.Alert] {
			t.Errorf("alert %s: the unit tests must expect it to fire (%v) and to stay quiet (%v)", r.Alert, fires[r.Alert], quiet[r.Alert])
		}
		if !headings[r.Alert] {
			t.Errorf("alert %s: docs/alerts.md has no section \"## %s\"", r.Alert, r.Alert)
		}
		if want := "docs/alerts.md#" + strings.ToLower(r.Alert); !strings.HasSuffix(r.Annotations["runbook_url"], want) {
			t.Errorf("alert %s: runbook_url %q does not end in %s", r.Alert, r.Annotations["runbook_url"], want)
		}
	}
	if len(alerts) == 0 {
		t.Fatal("config/prometheus/alerts.yaml has no alert")
	}
}
