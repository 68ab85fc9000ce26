// Package brokers maps Kubernetes pods to Kafka brokers.
//
// Which pod is which broker depends on the deployment's Flavor (a plain
// StatefulSet, Strimzi or Koperator); Snapshot records each broker's pod and
// volumes, and CompareIdentity checks that a broker rejoined as itself, on
// the same claims and volumes. For operator-managed clusters, DetectOperator
// reads the operators' custom resources (Strimzi's Kafka and KafkaNodePools,
// Koperator's KafkaCluster) and returns each cluster's Deployment: node IDs,
// pod selectors and bootstrap address. Audit checks that a deployment can
// lose a broker pod safely, asking Kafka (through the Kafka interface) for
// what only Kafka knows.
//
// Asking Kafka itself (health, leaders, configs, log dirs) is package
// kafkaadmin's job.
package brokers
