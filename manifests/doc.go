// Package manifests embeds the Kafka-on-Kubernetes manifests of this
// directory and applies them to a cluster with server-side apply.
package manifests
