package manifests

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSetKafkaEnv(t *testing.T) {
	l, err := LayoutNamed("separate-controllers")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := l.Objects()
	if err != nil {
		t.Fatal(err)
	}
	if err := SetKafkaEnv(objs, map[string]string{"KAFKA_METADATA_LOG_SEGMENT_MS": "10000", "KAFKA_LOG_DIRS": "/elsewhere"}); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, o := range objs {
		cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range cs {
			vars := map[string][]string{}
			for _, v := range c.(map[string]any)["env"].([]any) {
				e := v.(map[string]any)
				value, _ := e["value"].(string) // none with valueFrom
				vars[e["name"].(string)] = append(vars[e["name"].(string)], value)
			}
			if got := vars["KAFKA_METADATA_LOG_SEGMENT_MS"]; len(got) != 1 || got[0] != "10000" {
				t.Errorf("%s: KAFKA_METADATA_LOG_SEGMENT_MS = %v, want [10000]", o.GetName(), got)
			}
			if got := vars["KAFKA_LOG_DIRS"]; len(got) != 1 || got[0] != "/elsewhere" {
				t.Errorf("%s: KAFKA_LOG_DIRS = %v, want it replaced, once", o.GetName(), got)
			}
			if len(vars["POD_NAME"]) != 1 {
				t.Errorf("%s: the other variables must stay: %v", o.GetName(), vars)
			}
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("%d Kafka containers changed, want 2 (controllers and brokers)", seen)
	}
}

func TestSetKafkaEnvNoKafka(t *testing.T) {
	o := &unstructured.Unstructured{Object: map[string]any{"kind": "StatefulSet", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []any{map[string]any{"name": "kafka", "image": "mirror.example/kafka:4.4.0"}}}}}}}
	if err := SetKafkaEnv([]*unstructured.Unstructured{o}, map[string]string{"KAFKA_X": "1"}); err == nil {
		t.Fatal("settings with no Kafka container to take them: want an error")
	}
	if err := SetKafkaEnv([]*unstructured.Unstructured{o}, nil); err != nil {
		t.Fatalf("no settings: %v", err)
	}
}
