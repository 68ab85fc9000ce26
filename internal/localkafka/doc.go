// Package localkafka runs a local KRaft Kafka cluster, for integration tests
// and benchmarks.
//
// Its nodes are JVM processes on loopback ports, each in its own process
// group, configured from a container-style environment as the apache/kafka
// image would be (config.go). Tests start, stop, kill and restart them
// (lifecycle.go) and wait for the brokers and the quorum to be healthy
// (health.go).
package localkafka
