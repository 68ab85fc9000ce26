package manifests

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

//go:embed rbac/rbac.yaml
var rbacYAML []byte

// ServiceAccount is the name of the identity rbac/rbac.yaml grants.
const ServiceAccount = "kafkachaos"

// RBAC returns rbac/rbac.yaml for a suite whose ServiceAccount lives in
// saNamespace and whose faults may touch namespaces (at least one): the
// ServiceAccount, a Role and RoleBinding in each of namespaces, and a
// ClusterRole (nodes, PersistentVolumes, and get on exactly those
// namespaces) with its binding, both named kafkachaos-<saNamespace>.
func RBAC(saNamespace string, namespaces ...string) ([]byte, error) {
	if len(namespaces) == 0 {
		return nil, errors.New("manifests: rbac: no namespace to grant")
	}
	for _, ns := range append([]string{saNamespace}, namespaces...) {
		if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
			return nil, fmt.Errorf("manifests: rbac: namespace %q: %s", ns, errs[0])
		}
	}
	objs, err := kube.Decode(rbacYAML)
	if err != nil {
		return nil, err
	}
	subject := []any{map[string]any{"kind": "ServiceAccount", "name": ServiceAccount, "namespace": saNamespace}}
	clusterName := ServiceAccount + "-" + saNamespace
	var docs [][]byte
	add := func(o map[string]any) error {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("manifests: rbac: %w", err)
		}
		docs = append(docs, b)
		return nil
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount":
			o.SetNamespace(saNamespace)
			if err := add(o.Object); err != nil {
				return nil, err
			}
		case "Role", "RoleBinding":
			for _, ns := range namespaces {
				c := o.DeepCopy()
				c.SetNamespace(ns)
				if c.GetKind() == "RoleBinding" {
					c.Object["subjects"] = subject
				}
				if err := add(c.Object); err != nil {
					return nil, err
				}
			}
		case "ClusterRole":
			o.SetName(clusterName)
			rules, _ := o.Object["rules"].([]any)
			for _, r := range rules {
				rule, _ := r.(map[string]any)
				if _, ok := rule["resourceNames"]; ok {
					names := make([]any, len(namespaces))
					for i, ns := range namespaces {
						names[i] = ns
					}
					rule["resourceNames"] = names
				}
			}
			if err := add(o.Object); err != nil {
				return nil, err
			}
		case "ClusterRoleBinding":
			o.SetName(clusterName)
			o.Object["roleRef"].(map[string]any)["name"] = clusterName
			o.Object["subjects"] = subject
			if err := add(o.Object); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("manifests: rbac: unexpected %s %s in rbac/rbac.yaml", o.GetKind(), o.GetName())
		}
	}
	return bytes.Join(docs, []byte("---\n")), nil
}
