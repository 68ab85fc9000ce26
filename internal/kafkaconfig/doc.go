// Package kafkaconfig renders a Kafka node's server.properties and JVM options from the environment, following the apache/kafka image's env-var contract.
package kafkaconfig
