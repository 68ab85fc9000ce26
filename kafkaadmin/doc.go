// Package kafkaadmin is the suites' Kafka admin client: it asks a cluster for its health, partition leaders, active controller, broker configs and log dirs, unregisters brokers, and plans and runs partition reassignments.
//
// A Client goes through franz-go's kadm where kadm has the call (metadata,
// broker configs, log dirs), and sends raw kmsg requests where it has none
// (DescribeQuorum, UnregisterBroker, and a metadata request to one broker
// alone). Its metadata is always fresh, never the kgo client's cache: a
// broker that went away, or a leader that moved, shows at once.
//
// Which pod is which broker is package brokers' job; this package knows
// brokers by node ID only.
package kafkaadmin
