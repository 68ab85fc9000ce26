// Package manifests embeds the Kafka-on-Kubernetes manifests of this
// directory: the StatefulSet layouts of kafka/ (Layouts), the suite's RBAC
// in rbac/ (RBAC), and the example clusters for the Strimzi and Koperator
// operators in operators/ (OperatorExamples).
//
// Applying them and waiting for their pods is internal/kube's job; a
// Layout's Apply, ReadyPods and WaitReady call it with what the layout
// knows (its file, namespace and pod count).
package manifests
