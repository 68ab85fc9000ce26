// Package yourkafka runs the path for testing your own Kafka (docs/targets.md), as a
// user runs it, end to end: kafkachaos cluster up --manifest applies a Kafka
// that is not manifests/kafka (other names, labels, ports and node IDs),
// then the suite, given only the kept state dir and the namespace, finds
// the brokers, bootstraps from what they advertise and runs the gate's
// pod-kill story against them; a client then bootstraps through the
// chart's ClusterIP Service. A Kafka whose brokers advertise localhost
// must instead fail at once, naming the cause.
package yourkafka
