package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// establishTimeout bounds the wait for an applied CRD to be served.
const establishTimeout = 30 * time.Second

// Render builds the kustomization in dir as `kubectl apply -k` does, and returns its objects
// in kustomize's order.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range m.Resources() {
		// Through JSON, as the API machinery wants int64 where kustomize's maps hold int.
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(data); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}

// Decode reads the objects of a multi-document YAML or JSON stream, as one that kustomize or
// `kubectl custody join` writes.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		o := &unstructured.Unstructured{}
		err := d.Decode(&o.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
}

// Apply applies the objects through c with server-side apply, as the field manager owner:
// the CRDs first, waiting until each is served, then the rest.
func Apply(ctx context.Context, c client.Client, owner string, objs []*unstructured.Unstructured) error {
	apply := func(o *unstructured.Unstructured) error {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o.DeepCopy()), client.FieldOwner(owner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		return nil
	}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			if err := apply(o); err != nil {
				return err
			}
			if err := waitEstablished(ctx, c, o.GetName()); err != nil {
				return err
			}
		}
	}
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			if err := apply(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// waitEstablished waits until the CRD called name is served.
func waitEstablished(ctx context.Context, c client.Client, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, establishTimeout, true, func(ctx context.Context) (bool, error) {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established), nil
	})
	if err != nil {
		return fmt.Errorf("CRD %s is not established: %w", name, err)
	}
	return nil
}
