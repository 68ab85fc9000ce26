// Package brokers maps Kubernetes pods to Kafka brokers and checks Kafka-side health.
//
// Which pod is which broker depends on the deployment's Flavor (a plain
// StatefulSet, Strimzi or Koperator); Snapshot records each broker's pod and
// volumes, CompareIdentity and CheckLogDirs check that a broker rejoined as
// itself, with its data. For operator-managed clusters, DetectOperator reads
// the operators' custom resources (Strimzi's Kafka and KafkaNodePools,
// Koperator's KafkaCluster) and returns each cluster's Deployment: node IDs,
// pod selectors and bootstrap address.
package brokers
