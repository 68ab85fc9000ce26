// Package brokers maps Kubernetes pods to Kafka brokers and checks Kafka-side health.
package brokers
