package app

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
)

// now is the clock of the table tests.
var now = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

func ago(d time.Duration) *metav1.Time {
	t := metav1.NewTime(now.Add(-d))
	return &t
}

// printed is what write prints of a listing with -o format: stdout and stderr.
func printed(t *testing.T, format string, l listing) (string, string) {
	t.Helper()
	f := &outputFlags{print: genericclioptions.NewPrintFlags("")}
	*f.print.OutputFormat = format
	p, err := f.printer()
	if err != nil {
		t.Fatalf("-o %s: %v", format, err)
	}
	var out, errOut bytes.Buffer
	if err := f.write(genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, p, l); err != nil {
		t.Fatalf("-o %s: %v", format, err)
	}
	return out.String(), errOut.String()
}

func TestAge(t *testing.T) {
	for _, tc := range []struct {
		t    *metav1.Time
		want string
	}{
		{nil, "<unknown>"},
		{&metav1.Time{}, "<unknown>"},
		{ago(0), "0s"},
		{ago(90 * time.Second), "90s"},
		{ago(5*time.Minute + 30*time.Second), "5m30s"},
		{ago(42 * time.Minute), "42m"},
		{ago(3*time.Hour + 20*time.Minute), "3h20m"},
		{ago(26 * time.Hour), "26h"},
		{ago(50 * time.Hour), "2d2h"},
		{ago(400 * 24 * time.Hour), "400d"},
	} {
		if got := age(tc.t, now); got != tc.want {
			t.Errorf("age(%v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestJoined(t *testing.T) {
	for _, tc := range []struct {
		items []string
		want  string
	}{
		{nil, "<none>"},
		{[]string{"t2"}, "t2"},
		{[]string{"t2", "t3", "t4"}, "t2,t3,t4"},
	} {
		if got := joined(tc.items); got != tc.want {
			t.Errorf("joined(%v) = %q, want %q", tc.items, got, tc.want)
		}
	}
}

func TestEmptyListing(t *testing.T) {
	empty := &metav1.Table{ColumnDefinitions: volumeColumns}
	for _, tc := range []struct {
		l    listing
		want string
	}{
		{listing{table: empty, namespace: "shop"}, "No resources found in shop namespace.\n"},
		{listing{table: empty, allNamespaces: true}, "No resources found\n"},
	} {
		out, errOut := printed(t, "", tc.l)
		if out != "" || errOut != tc.want {
			t.Errorf("empty listing: stdout %q, stderr %q; want no stdout, stderr %q", out, errOut, tc.want)
		}
	}
}

func TestPrinterFormats(t *testing.T) {
	list := &storagev1alpha1.VolumeOwnershipList{Items: []storagev1alpha1.VolumeOwnership{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "coordinator"}}},
			Status: storagev1alpha1.VolumeOwnershipStatus{Owner: "t1"}},
	}}
	l := listing{list: list, table: volumeTable(list.Items, now)}

	out, _ := printed(t, "json", l)
	var got struct {
		APIVersion, Kind string
		Items            []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-o json: %v in %s", err, out)
	}
	if got.APIVersion != "v1" || got.Kind != "List" || len(got.Items) != 1 {
		t.Fatalf("-o json: %s %s with %d items, want a v1 List with 1", got.APIVersion, got.Kind, len(got.Items))
	}
	item := got.Items[0]
	if item["apiVersion"] != "storage.custody.dev/v1alpha1" || item["kind"] != "VolumeOwnership" {
		t.Errorf("-o json: item has apiVersion %v, kind %v", item["apiVersion"], item["kind"])
	}
	if strings.Contains(out, "managedFields") {
		t.Errorf("-o json prints managedFields:\n%s", out)
	}

	if out, _ := printed(t, "name", l); out != "volumeownership.storage.custody.dev/data\n" {
		t.Errorf("-o name = %q", out)
	}
	if out, _ := printed(t, "jsonpath={.items[*].status.owner}", l); out != "t1" {
		t.Errorf("-o jsonpath = %q", out)
	}

	f := &outputFlags{print: genericclioptions.NewPrintFlags("")}
	*f.print.OutputFormat = "table"
	_, err := f.printer()
	want := `unknown output format "table": use one of wide, json, yaml, kyaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file`
	if err == nil || err.Error() != want {
		t.Errorf("-o table: error %v, want %s", err, want)
	}
}
