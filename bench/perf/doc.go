// Command perf measures kafkachaos's steady state against Kafka's own tools
// (ProducerPerformance and EndToEndLatency) on one local KRaft cluster
// (--brokers, default 3), at each of --record-sizes (default 100 B, 1 KiB
// and 10 KiB), and writes the figures as JSON (Result).
//
// At each size both producers run twice, each on a topic of its own with
// the same partitions, replication and min.insync.replicas: once with
// identical settings, Kafka's tool given ours (batch size, linger,
// compression, acks, idempotence, in-flight limit, request size,
// round-robin partitioning, and a payload shaped like ours), and once
// each with its own defaults. Each run records the client's CPU time (user
// + system): the JVM's for Kafka's tool; for ours this process's, which
// includes consuming and verifying every record.
package main
