// Package localkafka runs a local KRaft Kafka cluster as JVM processes on loopback ports, for integration tests and benchmarks.
package localkafka
