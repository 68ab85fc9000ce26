// Package manifests embeds the Kafka-on-Kubernetes manifests of this
// directory: the StatefulSet layouts of kafka/ (Layouts), the suite's RBAC
// in rbac/ (RBAC), and the example clusters for the Strimzi and Koperator
// operators in operators/ (OperatorExamples). monitoring/ holds a PodMonitor
// and a Grafana dashboard for the load agents' Prometheus metrics; they are
// for users to apply and import, not embedded, and the tests check them
// against the agents' pods and the metrics the program exports.
//
// Applying them and waiting for their pods is internal/kube's job; a
// Layout's Apply, ReadyPods and WaitReady call it with what the layout
// knows (its file, namespace and pod count).
package manifests
