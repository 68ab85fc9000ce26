// Package javaload runs the Java clients of Kafka's own system tests,
// VerifiableProducer and VerifiableConsumer, as pods of the apache/kafka
// image (its bin/kafka-verifiable-producer.sh and -consumer.sh), so that
// the same manifests run on the embedded cluster and on a real one: their
// pods, and their JSON events read through pods/log as the tools print
// them, so that what a client acknowledged outlives its pod. Checking the
// events is steadystate/javaclients' job.
package javaload
