// Package javaclients reads the JSON events of the Java clients in Kafka's
// own tools jar, VerifiableProducer and VerifiableConsumer (one event per
// line on their standard output, as Kafka's system tests read them), into
// typed events: the producer's acknowledged sends, and the consumer's
// polls, commits and rebalances as groupcheck events.
package javaclients
