// Package brokers maps Kubernetes pods to Kafka brokers and checks Kafka-side health.
//
// Which pod is which broker depends on the deployment's Flavor (a plain
// StatefulSet, Strimzi or Koperator); Snapshot records each broker's pod and
// volumes, CompareIdentity and CheckLogDirs check that a broker rejoined as
// itself, with its data.
package brokers
