package main

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestResourcesFlag(t *testing.T) {
	var r resources
	for _, v := range []string{"configmaps, deployments.apps", "jobs.batch,", "routes.route.openshift.io"} {
		if err := r.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	want := resources{
		{Resource: "configmaps"},
		{Group: "apps", Resource: "deployments"},
		{Group: "batch", Resource: "jobs"},
		{Group: "route.openshift.io", Resource: "routes"},
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %v, want %v", []schema.GroupVersionResource(r), []schema.GroupVersionResource(want))
	}
	if got := r.String(); got != "configmaps,deployments.apps,jobs.batch,routes.route.openshift.io" {
		t.Fatalf("String() = %q", got)
	}
}
