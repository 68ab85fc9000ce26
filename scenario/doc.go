// Package scenario tells a chaos story against Kafka on Kubernetes: workloads, a fault, the recovery, and the checks of what survived.
package scenario
