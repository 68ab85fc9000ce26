// Package localkafkatest starts real local Kafka brokers for the tests of
// other packages (localkafka's own tests keep their copy, as a package's
// tests cannot import a package that imports it).
package localkafkatest
