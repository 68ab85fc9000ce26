// Package manifests embeds the Kafka-on-Kubernetes manifests of this
// directory and applies them to a cluster with server-side apply: the
// StatefulSet layouts of kafka/ (Layouts), and the example clusters for the
// Strimzi and Koperator operators in operators/ (OperatorExamples).
package manifests
