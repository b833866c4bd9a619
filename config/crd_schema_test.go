package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"sigs.k8s.io/yaml"
)

// TestPrometheusRuleMatchesCRD validates config/prometheus, as kustomize renders it, against
// the schema of the PrometheusRule CRD checked in under hack/crds/monitoring, as an API
// server would: a field the schema does not know, which the server would silently drop, is
// an error here too.
func TestPrometheusRuleMatchesCRD(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "hack", "crds", "monitoring", "monitoring.coreos.com_prometheusrules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, crd); err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, v := range crd.Spec.Versions {
		schemas[crd.Spec.Group+"/"+v.Name] = v.Schema.OpenAPIV3Schema
	}
	rules := 0
	for _, o := range render(t, "prometheus") {
		if o["kind"] != crd.Spec.Names.Kind {
			continue
		}
		rules++
		v1 := schemas[o["apiVersion"].(string)]
		if v1 == nil {
			t.Fatalf("the CRD serves no version %s", o["apiVersion"])
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
			t.Fatal(err)
		}
		validator, _, err := validation.NewSchemaValidator(internal)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range validation.ValidateCustomResource(nil, o, validator) {
			t.Errorf("%s: %v", o["kind"], e)
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			t.Fatal(err)
		}
		pruned := pruning.PruneWithOptions(o, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		for _, p := range pruned {
			t.Errorf("%s: unknown field %s", o["kind"], p)
		}
	}
	if rules != 1 {
		t.Fatalf("config/prometheus renders %d PrometheusRules, want 1", rules)
	}
}
