package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// FieldManager is the server-side apply field manager of everything Apply
// applies.
const FieldManager = "kafkachaos"

// Decode splits a multi-document YAML stream into objects, skipping empty
// documents.
func Decode(raw []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("kube: decode document %d: %w", len(objs)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("kube: document %d lacks apiVersion, kind or metadata.name", len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// Apply applies every object of raw with server-side apply, Namespaces
// first, and returns "kind/namespace/name" of each. Applying twice changes
// nothing the second time.
func Apply(ctx context.Context, cfg *rest.Config, raw []byte) ([]string, error) {
	objs, err := Decode(raw)
	if err != nil {
		return nil, err
	}
	return ApplyObjects(ctx, cfg, objs)
}

// ApplyObjects is Apply of decoded objects; it sorts objs in place.
func ApplyObjects(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) ([]string, error) {
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		return boolRank(b.GetKind() == "Namespace") - boolRank(a.GetKind() == "Namespace")
	})
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kube: %w", err)
	}
	var applied []string
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return applied, fmt.Errorf("kube: %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == "namespace" {
			ns := o.GetNamespace()
			if ns == "" {
				return applied, fmt.Errorf("kube: %s %s has no namespace", gvk.Kind, o.GetName())
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		if _, err := ri.Apply(ctx, o.GetName(), o, metav1.ApplyOptions{FieldManager: FieldManager, Force: true}); err != nil {
			return applied, fmt.Errorf("kube: apply %s %s: %w", gvk.Kind, o.GetName(), err)
		}
		applied = append(applied, fmt.Sprintf("%s/%s/%s", gvk.Kind, o.GetNamespace(), o.GetName()))
	}
	return applied, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
