package manifests

import (
	"context"
	"embed"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

//go:embed operators/strimzi/kafka.yaml operators/koperator/kafkacluster.yaml
var operatorFiles embed.FS

// OperatorExample is an example Kafka cluster for a Kafka operator, in
// manifests/operators: the operator's custom resources and a namespace that
// opts in to disruption. The operator itself is not included (see
// manifests/operators/README.md).
type OperatorExample struct {
	// Flavor is the operator, spelt as brokers.Flavor spells it: "strimzi"
	// or "koperator".
	Flavor    string
	File      string // path inside this directory
	Namespace string
	Cluster   string // name of the Kafka (Strimzi) or KafkaCluster (Koperator) resource
}

// OperatorExamples returns the operator examples, Strimzi first.
func OperatorExamples() []OperatorExample {
	return []OperatorExample{
		{Flavor: "strimzi", File: "operators/strimzi/kafka.yaml", Namespace: "kafka-strimzi", Cluster: "my-cluster"},
		{Flavor: "koperator", File: "operators/koperator/kafkacluster.yaml", Namespace: "kafka-koperator", Cluster: "kafka"},
	}
}

// OperatorExampleFor returns the example for flavor ("strimzi" or
// "koperator").
func OperatorExampleFor(flavor string) (OperatorExample, error) {
	var flavors []string
	for _, e := range OperatorExamples() {
		if e.Flavor == flavor {
			return e, nil
		}
		flavors = append(flavors, e.Flavor)
	}
	return OperatorExample{}, fmt.Errorf("manifests: no operator example for flavor %q (have %v)", flavor, flavors)
}

// Read returns the example's YAML.
func (e OperatorExample) Read() ([]byte, error) {
	raw, err := operatorFiles.ReadFile(e.File)
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	return raw, nil
}

// Objects returns the example's objects, as Decode returns them.
func (e OperatorExample) Objects() ([]*unstructured.Unstructured, error) {
	raw, err := e.Read()
	if err != nil {
		return nil, err
	}
	return Decode(raw)
}

// Apply applies the example (see Apply). The operator's CRDs must be
// installed, or it fails on the first custom resource.
func (e OperatorExample) Apply(ctx context.Context, cfg *rest.Config) ([]string, error) {
	raw, err := e.Read()
	if err != nil {
		return nil, err
	}
	return Apply(ctx, cfg, raw)
}
