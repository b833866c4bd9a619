package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// wide is the -o value that adds a table's priority-1 columns.
const wide = "wide"

// outputFlags is the -o flag of a listing: a table by default, more columns with -o wide, or
// any format of cli-runtime's printers.
type outputFlags struct {
	print *genericclioptions.PrintFlags
}

func addOutputFlags(cmd *cobra.Command) *outputFlags {
	f := &outputFlags{print: genericclioptions.NewPrintFlags("")}
	f.print.AddFlags(cmd)
	cmd.Flags().Lookup("output").Usage = fmt.Sprintf("Output format. One of: (%s).", strings.Join(f.formats(), ", "))
	return f
}

func (f *outputFlags) formats() []string { return append([]string{wide}, f.print.AllowedFormats()...) }

// listing is what a listing command read.
type listing struct {
	list  client.ObjectList
	table *metav1.Table
	// namespace is the namespace listed: "" for every namespace or for cluster-scoped objects.
	namespace string
	// allNamespaces adds the NAMESPACE column.
	allNamespaces bool
}

// printer is the printer of the -o format, nil for a table. Commands ask for it before they
// read anything, so that a wrong format fails first.
func (f *outputFlags) printer() (printers.ResourcePrinter, error) {
	format := *f.print.OutputFormat
	if format == "" || format == wide {
		return nil, nil
	}
	p, err := f.print.ToPrinter()
	if genericclioptions.IsNoCompatiblePrinterError(err) {
		return nil, fmt.Errorf("unknown output format %q: use one of %s", format, strings.Join(f.formats(), ", "))
	}
	return p, err
}

// write prints a listing as kubectl get does, with p from printer.
func (f *outputFlags) write(streams genericiooptions.IOStreams, p printers.ResourcePrinter, l listing) error {
	if p != nil {
		list, err := kubectlList(l.list)
		if err != nil {
			return err
		}
		return p.PrintObj(list, streams.Out)
	}
	if len(l.table.Rows) == 0 {
		if l.namespace != "" {
			fmt.Fprintf(streams.ErrOut, "No resources found in %s namespace.\n", l.namespace)
		} else {
			fmt.Fprintln(streams.ErrOut, "No resources found")
		}
		return nil
	}
	table := printers.NewTablePrinter(printers.PrintOptions{Wide: *f.print.OutputFormat == wide, WithNamespace: l.allNamespaces})
	return table.PrintObj(l.table, streams.Out)
}

// kubectlList is the list kubectl get prints with -o json, yaml, name or a template: a v1
// List whose items carry their apiVersion and kind, which the client leaves empty on typed
// objects.
func kubectlList(list client.ObjectList) (*unstructured.UnstructuredList, error) {
	out := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]any{"resourceVersion": list.GetResourceVersion()},
	}}
	err := meta.EachListItem(list, func(obj runtime.Object) error {
		gvk, err := apiutil.GVKForObject(obj, scheme)
		if err != nil {
			return err
		}
		fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return err
		}
		item := unstructured.Unstructured{Object: fields}
		item.SetGroupVersionKind(gvk)
		out.Items = append(out.Items, item)
		return nil
	})
	return out, err
}

// age is how long before now t was, as kubectl prints ages; <unknown> when t is not set.
func age(t *metav1.Time, now time.Time) string {
	if t == nil || t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// orNone is s, or <none> when s is empty, so that every table cell has a word in it.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

// joined is the items separated by commas, or <none>.
func joined(items []string) string { return orNone(strings.Join(items, ",")) }

// columns defines a table's columns: the names, then those that show only with -o wide.
func columns(names []string, wideNames ...string) []metav1.TableColumnDefinition {
	var defs []metav1.TableColumnDefinition
	for _, n := range names {
		defs = append(defs, metav1.TableColumnDefinition{Name: n, Type: "string"})
	}
	for _, n := range wideNames {
		defs = append(defs, metav1.TableColumnDefinition{Name: n, Type: "string", Priority: 1})
	}
	return defs
}

// row is one table row of obj; the object gives the NAMESPACE column its value.
func row(obj runtime.Object, cells ...any) metav1.TableRow {
	return metav1.TableRow{Cells: cells, Object: runtime.RawExtension{Object: obj}}
}

// list runs a listing command: it checks the output format, connects to the hub, reads the
// listing with read and prints it.
func (o *options) list(ctx context.Context, out *outputFlags, read func(context.Context, *hub) (listing, error)) error {
	p, err := out.printer()
	if err != nil {
		return err
	}
	h, err := o.hub()
	if err != nil {
		return err
	}
	l, err := read(ctx, h)
	if err != nil {
		return err
	}
	return out.write(o.streams, p, l)
}
