package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// apiResource is a resource the hub serves that can be listed and created.
type apiResource struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// status: it has a status subresource, which a create does not write.
	status bool
	// preferred: its version is its group's preferred one, the one export reads.
	preferred bool
}

// catalog is what the hub serves, by kind.
type catalog map[schema.GroupVersionKind]apiResource

// discoverCatalog asks the hub what it serves. Groups whose discovery fails (an aggregated
// API that does not answer) are left out.
func discoverCatalog(dc discovery.DiscoveryInterface) (catalog, error) {
	groups, err := restmapper.GetAPIGroupResources(dc)
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("discovering what the hub serves: %w", err)
	}
	c := catalog{}
	for _, g := range groups {
		for version, list := range g.VersionedResources {
			for _, r := range list {
				if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "create") {
					continue
				}
				gvk := schema.GroupVersionKind{Group: g.Group.Name, Version: version, Kind: r.Kind}
				c[gvk] = apiResource{
					gvr: gvk.GroupVersion().WithResource(r.Name), namespaced: r.Namespaced,
					status:    slices.ContainsFunc(list, func(s metav1.APIResource) bool { return s.Name == r.Name+"/status" }),
					preferred: version == g.Group.PreferredVersion.Version,
				}
			}
		}
	}
	return c, nil
}

// preferred lists the resources in their preferred versions, in a stable order.
func (c catalog) preferred() []apiResource {
	var out []apiResource
	for _, r := range c {
		if r.preferred {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b apiResource) int {
		return cmp.Or(strings.Compare(a.gvr.Group, b.gvr.Group), strings.Compare(a.gvr.Resource, b.gvr.Resource))
	})
	return out
}

// of is the resource of obj's kind.
func (c catalog) of(obj *unstructured.Unstructured) (apiResource, error) {
	r, ok := c[obj.GroupVersionKind()]
	if !ok {
		return r, fmt.Errorf("the hub serves no %s (install Custody on it, config/default, before the import): %s", obj.GroupVersionKind(), describe(obj))
	}
	return r, nil
}

// client is the dynamic client of obj's resource r, in obj's namespace.
func (r apiResource) client(dyn dynamic.Interface, namespace string) dynamic.ResourceInterface {
	if r.namespaced {
		return dyn.Resource(r.gvr).Namespace(namespace)
	}
	return dyn.Resource(r.gvr)
}

// listPage is how many objects one list request of export asks for.
const listPage = 500

// listAll lists every object of the resource, page by page; limit > 0 stops after about
// that many.
func listAll(ctx context.Context, dyn dynamic.Interface, r apiResource, limit int) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: listPage}
	if limit > 0 {
		opts.Limit = int64(limit)
	}
	for {
		list, err := dyn.Resource(r.gvr).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", r.gvr.GroupResource(), err)
		}
		for i := range list.Items {
			out = append(out, &list.Items[i])
		}
		opts.Continue = list.GetContinue()
		if opts.Continue == "" || limit > 0 {
			return out, nil
		}
	}
}

// errNoCustody says that the hub does not serve Custody's APIs.
var errNoCustody = errors.New("the hub serves no custody.dev API: is Custody installed on it (config/default)?")
