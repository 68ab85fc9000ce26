package manifests

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SetKafkaEnv sets env on every Kafka container (KafkaImage) of the
// workloads among objs, replacing a variable of the same name: the
// apache/kafka image turns KAFKA_FOO_BAR into the broker setting foo.bar,
// so a spec can tune its own Kafka. Init containers are left alone. With
// settings to set, it fails when no container runs the Kafka image.
func SetKafkaEnv(objs []*unstructured.Unstructured, env map[string]string) error {
	if len(env) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(env))
	set := 0
	for _, o := range objs {
		cs, found, err := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if err != nil {
			return fmt.Errorf("manifests: containers of %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if !found {
			continue
		}
		for _, c := range cs {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			if _, ok := KafkaTag(fmt.Sprint(m["image"])); !ok {
				continue
			}
			vars, _ := m["env"].([]any)
			vars = slices.DeleteFunc(vars, func(v any) bool {
				e, ok := v.(map[string]any)
				_, set := env[fmt.Sprint(e["name"])]
				return ok && set
			})
			for _, n := range names {
				vars = append(vars, map[string]any{"name": n, "value": env[n]})
			}
			m["env"] = vars
			set++
		}
		if err := unstructured.SetNestedSlice(o.Object, cs, "spec", "template", "spec", "containers"); err != nil {
			return fmt.Errorf("manifests: set env of %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	if set == 0 {
		return fmt.Errorf("manifests: no container runs %s to set %v on", KafkaImage, names)
	}
	return nil
}
