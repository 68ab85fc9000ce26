// Package kafkadist finds the Kafka jars that scripts/fetch-kafka.sh fetched from Maven Central, and holds the log4j2 configs for the processes run from them.
package kafkadist
