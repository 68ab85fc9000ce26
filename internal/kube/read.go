package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// kustomizationFiles are the names kustomize reads in a directory.
var kustomizationFiles = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// ReadObjects reads the manifests at path: a YAML or JSON file (several
// documents allowed), a kustomization (a directory holding a
// kustomization.yaml, built as kubectl apply -k would), or a directory of
// .yaml, .yml and .json files, read in name order (not recursively).
func ReadObjects(path string) ([]*unstructured.Unstructured, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("kube: manifests: %w", err)
	}
	if !st.IsDir() {
		return readFile(path)
	}
	for _, k := range kustomizationFiles {
		if _, err := os.Stat(filepath.Join(path, k)); err == nil {
			return kustomize(path)
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("kube: manifests: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, e := range entries {
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, strings.ToLower(filepath.Ext(e.Name()))) {
			continue
		}
		o, err := readFile(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		objs = append(objs, o...)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("kube: manifests: no object in a .yaml, .yml or .json file of %s", path)
	}
	return objs, nil
}

func readFile(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kube: manifests: %w", err)
	}
	objs, err := Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("kube: manifests: %s holds no object", path)
	}
	return objs, nil
}

func kustomize(dir string) ([]*unstructured.Unstructured, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kube: kustomize %s: %w", dir, err)
	}
	raw, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kube: kustomize %s: %w", dir, err)
	}
	return Decode(raw)
}

// Namespaces returns the namespaces objs put objects in, sorted, with the
// Namespace objects' own names.
func Namespaces(objs []*unstructured.Unstructured) []string {
	var ns []string
	for _, o := range objs {
		n := o.GetNamespace()
		if o.GetKind() == "Namespace" && o.GetAPIVersion() == "v1" {
			n = o.GetName()
		}
		if n != "" && !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns
}

// PodsOf returns how many pods the StatefulSets and Deployments of objs
// ask for in namespace (spec.replicas, 1 when unset).
func PodsOf(objs []*unstructured.Unstructured, namespace string) int {
	n := 0
	for _, o := range objs {
		if o.GetNamespace() != namespace || (o.GetKind() != "StatefulSet" && o.GetKind() != "Deployment") {
			continue
		}
		// Decoded YAML numbers are float64 (through JSON), built ones int64.
		switch r, _, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "replicas"); r := r.(type) {
		case int64:
			n += int(r)
		case float64:
			n += int(r)
		default:
			n++
		}
	}
	return n
}
