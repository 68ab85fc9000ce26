package manifests

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kafkachaos/kafkachaos/internal/kube"
)

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
func (e OperatorExample) Read() ([]byte, error) { return readFile(e.File) }

// Objects returns the example's objects, as kube.Decode returns them.
func (e OperatorExample) Objects() ([]*unstructured.Unstructured, error) {
	raw, err := e.Read()
	if err != nil {
		return nil, err
	}
	return kube.Decode(raw)
}
